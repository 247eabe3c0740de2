//===- SpyreArch.cpp - the architecture description in the IR -------------===//

#include "spyre-mlir/Dialect/Spyre/IR/SpyreArch.h"
#include "spyre-mlir/Arch/Arch.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

DictionaryAttr mlir::spyre::getArchAttr(MLIRContext *context, const ::spyre::Arch &arch) {
  Builder b(context);
  SmallVector<NamedAttribute> entries;
  entries.push_back(b.getNamedAttr("name", b.getStringAttr(arch.name)));
  for (const ::spyre::Arch::Parameter &p : arch.parameters())
    entries.push_back(b.getNamedAttr(p.key, p.isInteger ? Attribute(b.getI64IntegerAttr(p.integer))
                                                        : Attribute(b.getF64FloatAttr(p.real))));
  return b.getDictionaryAttr(entries);
}

std::optional<::spyre::Arch> mlir::spyre::loadArch(Operation *anchor, StringRef path) {
  std::string error;
  std::optional<::spyre::Arch> arch =
      ::spyre::Arch::load(::spyre::Arch::lookupPath(path), error);
  if (!arch)
    anchor->emitError() << error;
  return arch;
}

std::optional<::spyre::Arch> mlir::spyre::getArch(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  Attribute attr = module ? module->getAttr(kArchAttr) : Attribute();
  if (!attr)
    return loadArch(op, "");
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto name = dict ? dict.getAs<StringAttr>("name") : StringAttr();
  if (!name) {
    module.emitError() << "'" << kArchAttr << "' is not a dictionary with a 'name'";
    return std::nullopt;
  }
  std::string error;
  std::optional<::spyre::Arch> arch = ::spyre::Arch::fromParameters(
      name.str(),
      [&](const char *key, ::spyre::Arch::Parameter &p) {
        Attribute value = dict.get(key);
        if (!value)
          return false;
        if (auto i = dyn_cast<IntegerAttr>(value)) {
          p.isInteger = true;
          p.integer = i.getInt();
        } else if (auto f = dyn_cast<FloatAttr>(value)) {
          p.isInteger = false;
          p.real = f.getValueAsDouble();
        } else {
          return false;
        }
        return true;
      },
      kArchAttr, error);
  if (!arch)
    module.emitError() << error;
  return arch;
}
