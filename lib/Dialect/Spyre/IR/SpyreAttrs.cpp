//===- SpyreAttrs.cpp - Spyre attributes ----------------------------------===//

#include "Spyre/IR/SpyreAttrs.h"
#include "Spyre/IR/SpyreDialect.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::spyre;

#include "Spyre/IR/SpyreEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Spyre/IR/SpyreAttrs.cpp.inc"

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

void SpyreDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Spyre/IR/SpyreAttrs.cpp.inc"
      >();
}
