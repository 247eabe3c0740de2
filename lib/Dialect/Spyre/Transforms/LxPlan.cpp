//===- LxPlan.cpp - LX slots and their placement --------------------------===//

#include "LxPlan.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::spyre;

SmallVector<int64_t> mlir::spyre::assignLx(ArrayRef<LxSlot> slots, int64_t alignment,
                                           int64_t &total) {
  SmallVector<int64_t> offsets(slots.size(), 0);
  SmallVector<unsigned> placed;
  total = 0;
  // Largest first, each at the lowest aligned offset free over its live range.
  SmallVector<unsigned> order = llvm::to_vector(llvm::seq<unsigned>(0, slots.size()));
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return slots[a].footprint() > slots[b].footprint();
  });
  for (unsigned i : order) {
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (unsigned j : placed)
      if (slots[i].begin < slots[j].end && slots[j].begin < slots[i].end)
        busy.push_back({offsets[j], offsets[j] + slots[j].footprint()});
    llvm::sort(busy);
    int64_t at = 0;
    for (auto [lo, hi] : busy) {
      if (at + slots[i].footprint() <= lo)
        break;
      at = std::max<int64_t>(at, llvm::alignTo(hi, alignment));
    }
    offsets[i] = at;
    total = std::max(total, at + slots[i].footprint());
    placed.push_back(i);
  }
  return offsets;
}

LogicalResult mlir::spyre::checkLx(Operation *op, ArrayRef<LxSlot> slots,
                                   ArrayRef<int64_t> offsets, int64_t lxBytes) {
  if (offsets.size() != slots.size())
    return op->emitError() << "spyre.lx has " << offsets.size() << " offsets for "
                           << slots.size() << " LX slots";
  for (auto [i, slot] : llvm::enumerate(slots)) {
    if (offsets[i] < 0 || offsets[i] + slot.footprint() > lxBytes)
      return op->emitError() << "LX slot '" << slot.name << "' at [" << offsets[i] << ", "
                             << offsets[i] + slot.footprint()
                             << ") does not fit in the usable LX of " << lxBytes << " bytes";
    for (size_t j = 0; j < i; ++j) {
      const LxSlot &other = slots[j];
      bool liveTogether = slot.begin < other.end && other.begin < slot.end;
      bool overlap = offsets[i] < offsets[j] + other.footprint() &&
                     offsets[j] < offsets[i] + slot.footprint();
      if (liveTogether && overlap)
        return op->emitError() << "LX slots '" << other.name << "' and '" << slot.name
                               << "' are live together and overlap";
    }
  }
  return success();
}

int64_t mlir::spyre::largestFitting(int64_t limit, int64_t granule,
                                    function_ref<bool(int64_t)> fits) {
  // Candidates: multiples of the granule up to the limit (and the limit
  // itself), then 1 .. granule - 1 for sizes below a granule.
  auto candidate = [&](int64_t i) { return i <= 0 ? 0 : std::min(limit, i * granule); };
  int64_t lo = 0, hi = llvm::divideCeil(limit, granule);
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (fits(candidate(mid)))
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo > 0)
    return candidate(lo);
  int64_t small = 0, top = std::min(limit, granule - 1);
  while (small < top) {
    int64_t mid = (small + top + 1) / 2;
    if (fits(mid))
      small = mid;
    else
      top = mid - 1;
  }
  return small;
}
