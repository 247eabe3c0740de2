//===- RowsByIndexPlan.h - what spyre.gather and spyre.scatter share -*- C++ -*-===//
//
// Both move whole rows (or pieces of them) between a device table and LX at
// indices loaded into LX: a tile is [indices, row elements], a step holds a
// chunk of indices and its rows, double buffered.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_TRANSFORMS_ROWSBYINDEXPLAN_H
#define SPYRE_TRANSFORMS_ROWSBYINDEXPLAN_H

#include "OpPlan.h"
#include "LxPlan.h"

namespace mlir::spyre {

class RowsByIndexPlan : public OpPlan {
public:
  SmallVector<LxSlot> slots(ArrayRef<int64_t> tile) const override {
    return {{"indices", tile[0] * 4, 2}, {"rows", tile[0] * tile[1] * es, 2}};
  }

  LogicalResult verifyTile(ArrayRef<int64_t> tile) const override {
    if (tile.size() != 2 || tile[0] < 1 || tile[0] > count || tile[1] < 1 || tile[1] > rowElems)
      return op->emitError() << "spyre.tile of this " << what << " is [indices in [1, " << count
                             << "], row elements in [1, " << rowElems << "]]";
    return success();
  }

protected:
  RowsByIndexPlan(Operation *op, const ::spyre::Arch &arch, StringRef what)
      : OpPlan(op, arch), what(what) {}

  /// The widest piece of a row (whole sticks) that fits LX with one index,
  /// then the most indices, up to `mostIndices`, that fit with it; empty
  /// when not even one stick fits.
  SmallVector<int64_t> tileOf(int64_t mostIndices, int64_t lxBytes) const {
    auto fits = [&](int64_t ti, int64_t td) {
      int64_t total;
      assignLx(slots({ti, td}), arch.stickBytes, total);
      return total <= lxBytes;
    };
    int64_t td = largestFitting(rowElems, arch.stickBytes / es,
                                [&](int64_t d) { return fits(1, d); });
    if (!td)
      return {};
    int64_t ti = largestFitting(mostIndices, 1, [&](int64_t i) { return fits(i, td); });
    if (!ti)
      return {};
    return {ti, td};
  }

  StringRef what;
  int64_t count = 0, rowElems = 1, tableRows = 0, es = 0;
  uint8_t dtype = 0;
};

/// The overrides a gather's or a scatter's plan declares besides those above.
#define SPYRE_ROWS_BY_INDEX_OVERRIDES                                                           \
  int64_t parallelUnits() const override;                                                      \
  SmallVector<int64_t> chooseTile(int64_t cores, int64_t lxBytes) const override;              \
  LogicalResult lower(HwEmitter &emitter, int64_t cores, ArrayRef<int64_t> tile,               \
                      ArrayRef<int64_t> lxOffsets) const override;

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_ROWSBYINDEXPLAN_H
