//===- GatherPlan.cpp - running spyre.gather (embedding) on the card ------===//
//
// Index chunks are shared among cores. A step loads a chunk of indices, the
// DMA engine gathers the selected table rows (or a column range of them,
// when rows are too long for LX) and the tile is stored to the output.
// Whole rows of a chunk are consecutive in the output and go out as one run.
// A small table (T5's relative-position bias, 32 buckets x 8 heads) is
// loaded into LX once per core and gathered from there: from device memory
// each row of a few bytes would cost a stick.
//
//===----------------------------------------------------------------------===//

#include "PlanKinds.h"
#include "HwEmitter.h"
#include "RowsByIndexPlan.h"
#include "spyre-mlir/Isa/Isa.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

namespace {

class GatherPlan : public RowsByIndexPlan {
public:
  GatherPlan(GatherOp op, const ::spyre::Arch &arch)
      : RowsByIndexPlan(op, arch, "gather"), gather(op) {}
  LogicalResult analyze();

  SPYRE_ROWS_BY_INDEX_OVERRIDES

  SmallVector<LxSlot> slots(ArrayRef<int64_t> tile) const override {
    SmallVector<LxSlot> result = RowsByIndexPlan::slots(tile);
    if (tableInLx(tile))
      result.push_back({"table", tableRows * rowElems * es, 1});
    return result;
  }

private:
  /// Whether the whole table is loaded into LX: whole rows (tile[1]), and
  /// at most kTableInLxBytes.
  bool tableInLx(ArrayRef<int64_t> tile) const {
    return tile[1] == rowElems && tableRows * rowElems * es <= kTableInLxBytes;
  }
  /// A table's share of LX that leaves the chunks of indices and rows
  /// room: 64 KB, a twenty-fifth of the allocatable bytes.
  static constexpr int64_t kTableInLxBytes = 1 << 16;

  mutable GatherOp gather;
};

int64_t GatherPlan::parallelUnits() const { return count; }

LogicalResult GatherPlan::analyze() {
  auto table = cast<BufferType>(gather.getTable().getType());
  auto indices = cast<BufferType>(gather.getIndices().getType());
  if (failed(checkStaticRowMajor(gather)))
    return failure();
  if (gather.getAxis() != 0)
    return gather.emitError() << "cannot run on the card: only gathers along axis 0 "
                                 "(embedding lookups) are supported, not axis "
                              << gather.getAxis();
  if (!indices.getElementType().isInteger(32))
    return gather.emitError() << "cannot run on the card: gather indices must be i32, not "
                              << indices.getElementType();
  count = indices.getNumElements();
  tableRows = table.getDimSize(0);
  for (int64_t d : table.getShape().drop_front())
    rowElems *= d;
  dtype = deviceDType(table.getElementType());
  es = deviceDTypeBytes(dtype);
  if (count == 0 || rowElems == 0)
    return gather.emitError() << "cannot run on the card: an empty gather";
  return success();
}

SmallVector<int64_t> GatherPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  return tileOf(llvm::divideCeil(count, cores), lxBytes);
}

LogicalResult GatherPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                                ArrayRef<int64_t> lx) const {
  int64_t ti = tile[0], td = tile[1];
  SmallVector<LxSlot> slotList = slots(tile);
  int64_t chunks = llvm::divideCeil(count, ti), pieces = llvm::divideCeil(rowElems, td);
  int64_t groups = chunks * pieces;
  uint8_t i32 = uint8_t(ISA::DType::i32);
  Location loc = gather.getLoc();
  const bool lxTable = tableInLx(tile), wholeRows = td == rowElems;
  const std::array<int64_t, 3> byRow = {rowElems * es, 0, 0};
  for (int64_t core = 0; core < cores; ++core) {
    int64_t gBegin = groups * core / cores, gEnd = groups * (core + 1) / cores;
    auto stepAt = [&, gBegin](int64_t i) {
      int64_t g = gBegin + i, i0 = g / pieces * ti, d0 = g % pieces * td;
      int64_t ai = std::min(ti, count - i0), ad = std::min(td, rowElems - d0);
      int64_t idxAt = lx[0] + i % 2 * slotList[0].bytes;
      int64_t rowsAt = lx[1] + i % 2 * slotList[1].bytes;
      TileStep step;
      RefAttr idx = em.lx(i32, idxAt);
      RefAttr table = lxTable ? em.lx(dtype, lx[2], byRow)
                              : em.device(gather.getTable(), dtype, d0 * es, byRow);
      if (lxTable && i == 0) // the first step's loads complete before any step computes
        step.loads.push_back({em.lx(dtype, lx[2]), em.device(gather.getTable(), dtype, 0, byRow),
                              tableRows * rowElems * es, {1, 1, 1}});
      step.loads.push_back(
          {idx, em.device(gather.getIndices(), i32, i0 * 4), ai * 4, {1, 1, 1}});
      RefAttr rows = em.lx(dtype, rowsAt, {td * es, 0, 0});
      RefAttr target = em.device(gather.getTarget(), dtype, (i0 * rowElems + d0) * es, byRow);
      if (wholeRows)
        step.stores.push_back({target, em.lx(dtype, rowsAt), ai * rowElems * es, {1, 1, 1}});
      else
        step.stores.push_back({target, rows, ad * es, {ai, 1, 1}});
      step.compute = [=](StepCompute &sc) {
        sc.add(HwGatherOp::create(sc.b(), loc, rows, table, idx, ad * es, ai, tableRows,
                                  nullptr, 0, nullptr, nullptr));
      };
      return step;
    };
    em.pipeline(core, loc, gEnd - gBegin, stepAt);
  }
  return success();
}

} // namespace

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeGatherPlan(GatherOp op,
                                                              const ::spyre::Arch &arch) {
  return analyzedPlan<GatherPlan>(op, arch);
}
