//===- Linearize.h - accesses as base + strides -----------------*- C++ -*-===//

#ifndef SPYRE_TRANSFORMS_LINEARIZE_H
#define SPYRE_TRANSFORMS_LINEARIZE_H

#include "spyre-mlir/Dialect/Spyre/IR/SpyreTypes.h"
#include "mlir/IR/AffineMap.h"

#include <optional>
#include <string>

namespace mlir::spyre {

/// Element offset of an operand at a point of a loop nest:
/// base + sum(strides[i] * iv[i]).
struct LinearAccess {
  int64_t base = 0;
  SmallVector<int64_t> strides;
};

/// Whether `expr` is a sum of constant multiples of dimensions and a constant.
bool isLinear(AffineExpr expr);
/// base + sum(strides[d] * d_d) of an expression of `dims` dimensions for
/// which isLinear holds.
LinearAccess linearCoefficients(AffineExpr expr, unsigned dims);
/// Element strides of a dense buffer with its layout's dimension order.
SmallVector<int64_t> elementStrides(BufferType type);
/// The access `map` makes into a buffer of `type`, if it is linear in the
/// loops; else nothing, with the reason in `why`.
std::optional<LinearAccess> linearize(AffineMap map, BufferType type, std::string &why);
/// Elements that loops of these strides and sizes make one run: the
/// product of the sizes of the loops whose strides (either sign) continue
/// each other from 1. Loops of one point, stride 0 or a dynamic size do
/// not count.
int64_t contiguousRun(ArrayRef<int64_t> strides, ArrayRef<int64_t> sizes);

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_LINEARIZE_H
