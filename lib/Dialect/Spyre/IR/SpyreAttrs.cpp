//===- SpyreAttrs.cpp - Spyre attributes ----------------------------------===//

#include "spyre-mlir/Dialect/Spyre/IR/SpyreAttrs.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreDialect.h"
#include "spyre-mlir/Isa/Isa.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

#include "spyre-mlir/Dialect/Spyre/IR/SpyreEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "spyre-mlir/Dialect/Spyre/IR/SpyreAttrs.cpp.inc"

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> order, int64_t stick) {
  if (!isPermutationVector(order))
    return emitError() << "layout order [" << order
                       << "] is not a permutation of 0.." << order.size();
  if (stick < 0)
    return emitError() << "stick must be positive (or 0 for dense), got "
                       << stick;
  if (stick > 0 && order.empty())
    return emitError() << "a stick layout needs at least one dimension";
  return success();
}

LayoutAttr LayoutAttr::getRowMajor(MLIRContext *context, int64_t rank) {
  return LayoutAttr::get(context,
                         llvm::to_vector(llvm::seq<int64_t>(0, rank)), 0);
}

bool LayoutAttr::isRowMajor() const {
  if (getStick() != 0)
    return false;
  for (auto [i, dim] : llvm::enumerate(getOrder()))
    if (static_cast<int64_t>(i) != dim)
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// #spyre.ref
//===----------------------------------------------------------------------===//

// Format: `<` (`lx` | @symbol) `,` dtype (`,` key `=` value)* `>`, keys
// offset, strides, inc, core.
Attribute RefAttr::parse(AsmParser &parser, Type) {
  FlatSymbolRefAttr buffer;
  std::string dtypeName;
  int64_t offset = 0, core = 0;
  SmallVector<int64_t> strides(3, 0), inc(3, 0);
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  if (failed(parser.parseOptionalKeyword("lx")) &&
      parser.parseCustomAttributeWithFallback(buffer, Type{}))
    return {};
  SMLoc dtypeLoc;
  if (parser.parseComma() || (dtypeLoc = parser.getCurrentLocation(), false) ||
      parser.parseKeywordOrString(&dtypeName))
    return {};
  int dtype = ISA::indexOfName(ISA::kDTypeNames, dtypeName);
  if (dtype < 0) {
    parser.emitError(dtypeLoc) << "unknown element type '" << dtypeName
                               << "' (expected dl16, f32, i32, i8 or u8)";
    return {};
  }
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "offset" || key == "core") {
      if (parser.parseInteger(key == "offset" ? offset : core))
        return {};
    } else if (key == "strides" || key == "inc") {
      SmallVector<int64_t> &values = key == "strides" ? strides : inc;
      values.clear();
      if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
            return parser.parseInteger(values.emplace_back());
          }))
        return {};
    } else {
      parser.emitError(keyLoc) << "unknown #spyre.ref field '" << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<RefAttr>(loc, parser.getContext(), buffer,
                                    static_cast<uint8_t>(dtype), offset, strides, inc, core);
}

void RefAttr::print(AsmPrinter &printer) const {
  printer << "<";
  if (getBuffer())
    printer.printAttribute(getBuffer());
  else
    printer << "lx";
  printer << ", " << ISA::kDTypeNames[getDtype()];
  if (getOffset())
    printer << ", offset = " << getOffset();
  auto printList = [&](StringRef key, ArrayRef<int64_t> values) {
    if (llvm::all_of(values, [](int64_t v) { return v == 0; }))
      return;
    printer << ", " << key << " = [";
    llvm::interleaveComma(values, printer);
    printer << "]";
  };
  printList("strides", getStrides());
  printList("inc", getInc());
  if (getCore())
    printer << ", core = " << getCore();
  printer << ">";
}

LogicalResult RefAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              FlatSymbolRefAttr, uint8_t dtype, int64_t, ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> inc, int64_t core) {
  if (dtype >= ISA::kNumDTypes)
    return emitError() << "invalid element type " << int(dtype);
  if (strides.size() != 3 || inc.size() != 3)
    return emitError() << "strides and inc have three entries each";
  if (core < 0)
    return emitError() << "core must not be negative";
  return success();
}

void SpyreDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "spyre-mlir/Dialect/Spyre/IR/SpyreAttrs.cpp.inc"
      >();
}
