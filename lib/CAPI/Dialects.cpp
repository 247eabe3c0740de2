//===- Dialects.cpp - C API of the Spyre dialect --------------------------===//

#include "spyre-mlir-c/Dialects.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreArch.h"
#include "spyre-mlir/InitAll.h"
#include "spyre-mlir/Pipelines/Pipelines.h"
#include "spyre-mlir/Target/SpyreBinary/ToBinary.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

using namespace mlir;
using namespace mlir::spyre;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Spyre, spyre, SpyreDialect)

void spyreRegisterDialects(MlirDialectRegistry registry) {
  registerAllDialects(*unwrap(registry));
}

void spyreRegisterPasses(void) { registerAllPasses(); }

bool spyreTypeIsABuffer(MlirType type) {
  return isa<BufferType>(unwrap(type));
}

MlirTypeID spyreBufferTypeGetTypeID(void) {
  return wrap(TypeID::get<BufferType>());
}

MlirType spyreBufferTypeGetChecked(MlirLocation loc, intptr_t rank,
                                   const int64_t *shape, MlirType elementType,
                                   MlirAttribute layout, int memorySpace) {
  Location location = unwrap(loc);
  std::optional<MemorySpace> space = symbolizeMemorySpace(memorySpace);
  if (!space) {
    emitError(location) << "unknown memory space " << memorySpace;
    return {nullptr};
  }
  LayoutAttr layoutAttr;
  if (!mlirAttributeIsNull(layout)) {
    layoutAttr = dyn_cast<LayoutAttr>(unwrap(layout));
    if (!layoutAttr) {
      emitError(location) << "not a #spyre.layout: " << unwrap(layout);
      return {nullptr};
    }
  }
  return wrap(BufferType::getChecked(
      [&] { return emitError(location); }, location.getContext(),
      ArrayRef<int64_t>(shape, rank), unwrap(elementType), layoutAttr,
      *space));
}

MlirAttribute spyreBufferTypeGetLayout(MlirType type) {
  return wrap(cast<BufferType>(unwrap(type)).getLayout());
}

int spyreBufferTypeGetMemorySpace(MlirType type) {
  return static_cast<int>(cast<BufferType>(unwrap(type)).getMemorySpace());
}

bool spyreAttributeIsALayout(MlirAttribute attr) {
  return isa<LayoutAttr>(unwrap(attr));
}

MlirTypeID spyreLayoutAttrGetTypeID(void) {
  return wrap(TypeID::get<LayoutAttr>());
}

MlirAttribute spyreLayoutAttrGetChecked(MlirLocation loc, intptr_t rank,
                                        const int64_t *order, int64_t stick) {
  Location location = unwrap(loc);
  return wrap(LayoutAttr::getChecked([&] { return emitError(location); },
                                     location.getContext(),
                                     ArrayRef<int64_t>(order, rank), stick));
}

intptr_t spyreLayoutAttrGetRank(MlirAttribute attr) {
  return cast<LayoutAttr>(unwrap(attr)).getOrder().size();
}

int64_t spyreLayoutAttrGetOrder(MlirAttribute attr, intptr_t pos) {
  return cast<LayoutAttr>(unwrap(attr)).getOrder()[pos];
}

int64_t spyreLayoutAttrGetStick(MlirAttribute attr) {
  return cast<LayoutAttr>(unwrap(attr)).getStick();
}

MlirLogicalResult spyreTranslateToBinary(MlirOperation op, MlirStringRef archPath,
                                         void (*onBytes)(MlirStringRef, void *),
                                         void (*onError)(MlirStringRef, void *),
                                         void *userData) {
  Operation *root = unwrap(op);
  std::string messages;
  llvm::raw_string_ostream os(messages);
  // Collect this translation's diagnostics for the caller instead of letting
  // them reach the context's handler.
  ScopedDiagnosticHandler handler(root->getContext(), [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  // The description named by the caller, else the one the compile attached.
  std::optional<::spyre::Arch> arch =
      archPath.length ? loadArch(root, StringRef(archPath.data, archPath.length)) : getArch(root);
  std::vector<uint8_t> binary;
  if (!arch) {
    onError(mlirStringRefCreate(messages.data(), messages.size()), userData);
    return mlirLogicalResultFailure();
  }
  if (failed(translateToBinary(root, *arch, binary))) {
    onError(mlirStringRefCreate(messages.data(), messages.size()), userData);
    return mlirLogicalResultFailure();
  }
  onBytes(mlirStringRefCreate(reinterpret_cast<const char *>(binary.data()), binary.size()),
          userData);
  return mlirLogicalResultSuccess();
}

intptr_t spyreCompileStageCount(void) { return compileStages().size(); }

MlirStringRef spyreCompileStageName(intptr_t pos) {
  return mlirStringRefCreateFromCString(compileStages()[pos].name);
}

MlirStringRef spyreCompileStageResult(intptr_t pos) {
  return mlirStringRefCreateFromCString(compileStages()[pos].result);
}
