//===- SpyreTypes.cpp - Spyre types ---------------------------------------===//

#include "spyre-mlir/Dialect/Spyre/IR/SpyreTypes.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::spyre;

#define GET_TYPEDEF_CLASSES
#include "spyre-mlir/Dialect/Spyre/IR/SpyreTypes.cpp.inc"

/// Element types the card stores. i64 is deliberately absent: the card has no
/// 64-bit integers and the export narrows them to i32.
static bool isStorableElementType(Type type) {
  if (type.isF16() || type.isBF16() || type.isF32())
    return true;
  return type.isSignlessInteger(1) || type.isSignlessInteger(8) ||
         type.isSignlessInteger(32);
}

// Format: `<` dims `x` element-type (`,` layout)? (`,` memory-space)? `>`.
Type BufferType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};
  LayoutAttr layout;
  MemorySpace space = MemorySpace::dram;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc itemLoc = parser.getCurrentLocation();
    if (succeeded(parser.parseOptionalKeyword(&keyword))) {
      std::optional<MemorySpace> parsed = symbolizeMemorySpace(keyword);
      if (!parsed) {
        parser.emitError(itemLoc) << "unknown memory space '" << keyword
                                  << "' (expected 'dram' or 'lx')";
        return {};
      }
      space = *parsed;
      continue;
    }
    if (layout) {
      parser.emitError(itemLoc, "buffer type has more than one layout");
      return {};
    }
    if (parser.parseCustomAttributeWithFallback(layout))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<BufferType>(loc, parser.getContext(), shape,
                                       elementType, layout, space);
}

void BufferType::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printDimensionList(getShape());
  if (!getShape().empty())
    printer << "x";
  printer << getElementType();
  if (getLayout()) {
    printer << ", " << getLayout();
  }
  if (getMemorySpace() != MemorySpace::dram)
    printer << ", " << stringifyMemorySpace(getMemorySpace());
  printer << ">";
}

LogicalResult BufferType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType,
                                 LayoutAttr layout, MemorySpace) {
  for (int64_t dim : shape)
    if (dim < 0 && !ShapedType::isDynamic(dim))
      return emitError() << "buffer dimension sizes must be >= 0, got " << dim;
  if (elementType.isSignlessInteger(64))
    return emitError() << "the card has no 64-bit integers: use i32 "
                          "(Inductor's int64 is narrowed to i32)";
  if (!isStorableElementType(elementType))
    return emitError() << "unsupported buffer element type " << elementType
                       << " (expected f16, bf16, f32, i8, i32 or i1)";
  // Sizes and offsets are int64 everywhere: a shape whose element count
  // overflows it has no meaning (and would wrap in every size computation).
  int64_t elements = 1;
  for (int64_t dim : shape)
    if (!ShapedType::isDynamic(dim) && llvm::MulOverflow(elements, dim, elements))
      return emitError() << "buffer has more than 2^63 elements";
  if (layout && layout.getOrder().size() != shape.size())
    return emitError() << "layout has " << layout.getOrder().size()
                       << " dimensions but the buffer has rank "
                       << shape.size();
  return success();
}

ShapedType BufferType::cloneWith(std::optional<ArrayRef<int64_t>> shape,
                                 Type elementType) const {
  ArrayRef<int64_t> newShape = shape ? *shape : getShape();
  // A layout describes a rank; a new rank drops it back to row-major.
  LayoutAttr layout = newShape.size() == getShape().size() ? getLayout()
                                                           : LayoutAttr();
  return BufferType::get(getContext(), newShape, elementType, layout,
                         getMemorySpace());
}

LayoutAttr BufferType::getLayoutOrDefault() const {
  if (getLayout())
    return getLayout();
  return LayoutAttr::getRowMajor(getContext(), getShape().size());
}

void SpyreDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "spyre-mlir/Dialect/Spyre/IR/SpyreTypes.cpp.inc"
      >();
}
