//===- Linearize.cpp - accesses as base + strides -------------------------===//

#include "Linearize.h"

using namespace mlir;
using namespace mlir::spyre;

SmallVector<int64_t> mlir::spyre::elementStrides(BufferType type) {
  int64_t rank = type.getRank();
  SmallVector<int64_t> strides(rank, 0);
  SmallVector<int64_t> order;
  if (LayoutAttr layout = type.getLayout())
    order.assign(layout.getOrder().begin(), layout.getOrder().end());
  else
    order = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    strides[order[i]] = stride;
    stride *= type.getDimSize(order[i]);
  }
  return strides;
}

bool mlir::spyre::isLinear(AffineExpr expr) {
  if (!expr.isPureAffine())
    return false;
  bool linear = true;
  expr.walk([&](AffineExpr e) {
    if (isa<AffineBinaryOpExpr>(e) && e.getKind() != AffineExprKind::Add &&
        e.getKind() != AffineExprKind::Mul)
      linear = false;
  });
  return linear;
}

std::optional<LinearAccess> mlir::spyre::linearize(AffineMap map, BufferType type,
                                                   std::string &why) {
  if (LayoutAttr layout = type.getLayout(); layout && layout.getStick()) {
    why = "its buffer is stored in sticks, which tiling does not address yet";
    return std::nullopt;
  }
  if (map.getNumSymbols()) {
    why = "its indexing map has symbols (run-time offsets)";
    return std::nullopt;
  }
  SmallVector<int64_t> bufferStrides = elementStrides(type);
  unsigned dims = map.getNumDims();
  LinearAccess access;
  access.strides.assign(dims, 0);
  for (auto [j, expr] : llvm::enumerate(map.getResults())) {
    if (!isLinear(expr)) {
      why = "its indexing map is not linear in the loops (floordiv, mod or a product)";
      return std::nullopt;
    }
    LinearAccess result = linearCoefficients(expr, dims);
    access.base += result.base * bufferStrides[j];
    for (unsigned d = 0; d < dims; ++d)
      access.strides[d] += result.strides[d] * bufferStrides[j];
  }
  return access;
}

LinearAccess mlir::spyre::linearCoefficients(AffineExpr expr, unsigned dims) {
  // A linear expression is its value at 0 plus its increments along each
  // dimension.
  MLIRContext *ctx = expr.getContext();
  auto valueAt = [&](int64_t dim) {
    SmallVector<AffineExpr> point(dims, getAffineConstantExpr(0, ctx));
    if (dim >= 0)
      point[dim] = getAffineConstantExpr(1, ctx);
    return cast<AffineConstantExpr>(expr.replaceDims(point)).getValue();
  };
  LinearAccess result;
  result.base = valueAt(-1);
  for (unsigned d = 0; d < dims; ++d)
    result.strides.push_back(valueAt(d) - result.base);
  return result;
}

int64_t mlir::spyre::contiguousRun(ArrayRef<int64_t> strides, ArrayRef<int64_t> sizes) {
  int64_t run = 1;
  for (bool grew = true; grew;) {
    grew = false;
    for (auto [stride, size] : llvm::zip(strides, sizes))
      if (size > 1 && std::abs(stride) == run) {
        run *= size;
        grew = true;
      }
  }
  return run;
}
