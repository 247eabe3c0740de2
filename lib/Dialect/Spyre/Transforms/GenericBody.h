//===- GenericBody.h - a spyre.generic body as vector instructions -*- C++ -*-===//
//
// Each op of a generic's body becomes one SFU instruction over a whole tile
// (rows x cols), so every body value is a tile-shaped view: an input tile, an
// immediate, a temporary tile in LX, or the output tile it is yielded to.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_TRANSFORMS_GENERICBODY_H
#define SPYRE_TRANSFORMS_GENERICBODY_H

#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"

#include <string>

namespace mlir::spyre {

/// The SFU instruction of one body op.
struct VectorOp {
  enum class Kind { unary, binary, select, iota } kind;
  std::string func;         ///< ISA function name (unary / binary)
  std::string swappedFunc;  ///< binary: the function with operands swapped, if any
};

/// The instruction for `op`, or nothing with the reason in `why`.
std::optional<VectorOp> vectorOpFor(Operation &op, std::string &why);

/// Where a body value lives during a step.
struct BodyValue {
  enum class Kind { input, immediate, temp, output } kind;
  unsigned index = 0;   ///< input number, temp number or output number
  double immediate = 0; ///< value of an immediate (and of a constant in a temp)
  uint8_t dtype = 0;    ///< device element type
  /// A constant temp held as one element, which instructions read with zero
  /// strides (emitBody): only emitBody's own instructions may read it.
  bool scalar = false;
};

struct BodyTemp {
  uint8_t dtype;
  int64_t begin, end; ///< live range in body positions
};

/// The storage of every body value and the temporaries they need.
struct BodyPlan {
  DenseMap<Value, BodyValue> values;
  SmallVector<BodyTemp> temps;
  /// Ops in order, with their instruction (constants excluded).
  SmallVector<std::pair<Operation *, VectorOp>> ops;
  /// Results of the conversions the vector unit does for free (widenings,
  /// narrowings folded into the op before), each with the value it renames.
  DenseMap<Value, Value> renamed;
};

/// Plans the body of `op`, or reports on `op` what the vector unit cannot do.
FailureOr<BodyPlan> planBody(GenericOp op);

class StepCompute;

/// Emits the instructions of `plan` into `sc` over a `rows` x `cols` tile:
/// one SFU instruction per body op (a fill per constant held in a
/// temporary), each value read from and written to the LX view `view` gives
/// for it. `index` fills the given columns of every row of a
/// `spyre.index_expr`'s tile: one column when `indexAlongRowsOnly` says its
/// value does not change along a row (its readers then read that column
/// with a zero stride). Yielded values (copies into outputs, combiners) are
/// the caller's.
void emitBody(StepCompute &sc, Location loc, const BodyPlan &plan, int64_t rows, int64_t cols,
              function_ref<RefAttr(Value)> view,
              function_ref<void(IndexExprOp, RefAttr, int64_t)> index,
              function_ref<bool(IndexExprOp)> indexAlongRowsOnly);
/// The same over `blocks` tiles of `rows` x `cols` at once, op by op: each
/// op is emitted for every block (`view` and `index` take the block) before
/// the next, so that a block's later ops may overwrite what another block's
/// earlier ops read.
void emitBody(StepCompute &sc, Location loc, const BodyPlan &plan, int64_t rows, int64_t cols,
              int64_t blocks, function_ref<RefAttr(Value, int64_t)> view,
              function_ref<void(IndexExprOp, RefAttr, int64_t, int64_t)> index,
              function_ref<bool(IndexExprOp)> indexAlongRowsOnly);

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_GENERICBODY_H
