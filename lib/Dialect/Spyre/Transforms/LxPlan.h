//===- LxPlan.h - LX slots and their placement ------------------*- C++ -*-===//

#ifndef SPYRE_TRANSFORMS_LXPLAN_H
#define SPYRE_TRANSFORMS_LXPLAN_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mlir::spyre {

/// One region of LX an op needs while it runs. `copies` is 2 for tiles that
/// are double buffered. Slots whose live ranges [begin, end) overlap must not
/// overlap in LX; ranges count positions in the op's per-tile work.
struct LxSlot {
  std::string name;
  int64_t bytes = 0;
  int64_t copies = 1;
  int64_t begin = 0, end = INT64_MAX;
  int64_t footprint() const { return bytes * copies; }
};

/// Offsets for `slots` (first fit by live range, stick aligned) and the
/// bytes of LX they span.
SmallVector<int64_t> assignLx(ArrayRef<LxSlot> slots, int64_t alignment, int64_t &total);
/// Checks that live-overlapping slots do not overlap in LX and that all fit
/// in `lxBytes`; reports the first violation on `op`.
LogicalResult checkLx(Operation *op, ArrayRef<LxSlot> slots, ArrayRef<int64_t> offsets,
                      int64_t lxBytes);

/// The largest value in [1, limit] for which `fits` holds, assuming `fits`
/// is monotonic, or 0; values above `granule` are multiples of it. The tile
/// searches use it to find the largest tile whose slots fit.
int64_t largestFitting(int64_t limit, int64_t granule, function_ref<bool(int64_t)> fits);

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_LXPLAN_H
