//===- ScatterPlan.cpp - running spyre.scatter (row updates) on the card --===//
//
// The table is seen as [outer, rows, row elements] around the scatter's
// axis. A unit of work is one outer slice (a cache's head) and one column
// piece of its rows; units never write the same table bytes, so they are
// shared among cores. A unit's indices stay on one core, in order, so that
// of two equal indices the later row is written last, as PyTorch's
// sequential loop leaves it; indices known not to repeat (unique_indices:
// a prompt's positions) are cut into chunks that are units of their own. A
// step loads a chunk of indices and the matching source rows (wherever the
// source holds them: source_axis), and the DMA engine writes the rows to
// the table.
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

class ScatterPlan : public RowsByIndexPlan {
public:
  ScatterPlan(ScatterOp op, const ::spyre::Arch &arch)
      : RowsByIndexPlan(op, arch, "scatter"), scatter(op) {}
  LogicalResult analyze();

  SPYRE_ROWS_BY_INDEX_OVERRIDES

private:
  /// Chunks of `ti` indices and pieces of `td` row elements.
  int64_t chunks(int64_t ti) const { return llvm::divideCeil(count, ti); }
  int64_t pieces(int64_t td) const { return llvm::divideCeil(rowElems, td); }
  /// Element offset in the source of outer slice `o`'s first row.
  int64_t sourceOffset(int64_t o) const;

  mutable ScatterOp scatter;
  int64_t outer = 1;
  /// The source's strides (elements) of the table's outer dimensions and of
  /// its index (the innermost index dimension: the indices are dense).
  SmallVector<int64_t> outerSizes, outerStrides;
  int64_t indexStride = 0;
  bool unique = false;
};

// Units are outer slices (and chunks of unique indices, at most one index
// each); a tile's column pieces multiply them (lower).
int64_t ScatterPlan::parallelUnits() const { return unique ? outer * count : outer; }

int64_t ScatterPlan::sourceOffset(int64_t o) const {
  int64_t offset = 0;
  for (int64_t d = int64_t(outerSizes.size()) - 1; d >= 0; --d) {
    offset += o % outerSizes[d] * outerStrides[d];
    o /= outerSizes[d];
  }
  return offset;
}

LogicalResult ScatterPlan::analyze() {
  auto table = cast<BufferType>(scatter.getTable().getType());
  auto indices = cast<BufferType>(scatter.getIndices().getType());
  if (failed(checkStaticRowMajor(scatter)))
    return failure();
  int64_t axis = scatter.getAxis();
  count = indices.getNumElements();
  tableRows = table.getDimSize(axis);
  for (int64_t d : table.getShape().take_front(axis))
    outer *= d;
  for (int64_t d : table.getShape().drop_front(axis + 1))
    rowElems *= d;
  dtype = deviceDType(table.getElementType());
  es = deviceDTypeBytes(dtype);
  if (count == 0 || rowElems == 0 || outer == 0 || tableRows == 0)
    return scatter.emitError() << "cannot run on the card: an empty scatter";
  // Source dimensions: the outer ones with the index ones at `at`, then a
  // row's; row-major strides.
  ArrayRef<int64_t> shape = cast<BufferType>(scatter.getSource().getType()).getShape();
  int64_t at = scatter.getSourceAxis().value_or(axis), indexRank = indices.getRank();
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  for (int64_t d = 0; d < axis; ++d) {
    int64_t sd = d < at ? d : d + indexRank;
    outerSizes.push_back(shape[sd]);
    outerStrides.push_back(strides[sd]);
  }
  indexStride = indexRank ? strides[at + indexRank - 1] : 0;
  unique = scatter.getUniqueIndices();
  return success();
}

SmallVector<int64_t> ScatterPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  // Unique indices: chunks small enough that every core gets one.
  return tileOf(unique ? llvm::divideCeil(count, llvm::divideCeil(cores, outer)) : count,
                lxBytes);
}

LogicalResult ScatterPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                                 ArrayRef<int64_t> lx) const {
  int64_t ti = tile[0], td = tile[1];
  SmallVector<LxSlot> slotList = slots(tile);
  // Steps of a unit: its chunks, or one when chunks are units themselves.
  int64_t steps = unique ? 1 : chunks(ti);
  int64_t units = outer * pieces(td) * (unique ? chunks(ti) : 1);
  int64_t rowBytes = rowElems * es;
  uint8_t i32 = uint8_t(ISA::DType::i32);
  Location loc = scatter.getLoc();
  for (int64_t core = 0; core < cores; ++core) {
    int64_t uBegin = units * core / cores, uEnd = units * (core + 1) / cores;
    auto stepAt = [&, uBegin](int64_t i) {
      int64_t u = uBegin + i / steps, chunk = unique ? u % chunks(ti) : i % steps;
      if (unique)
        u /= chunks(ti);
      int64_t o = u / pieces(td), d0 = u % pieces(td) * td;
      int64_t i0 = chunk * ti;
      int64_t ai = std::min(ti, count - i0), ad = std::min(td, rowElems - d0);
      int64_t idxAt = lx[0] + i % 2 * slotList[0].bytes;
      int64_t rowsAt = lx[1] + i % 2 * slotList[1].bytes;
      TileStep step;
      RefAttr idx = em.lx(i32, idxAt);
      step.loads.push_back({idx, em.device(scatter.getIndices(), i32, i0 * 4), ai * 4, {1, 1, 1}});
      RefAttr rows = em.lx(dtype, rowsAt, {td * es, 0, 0});
      step.loads.push_back({rows,
                            em.device(scatter.getSource(), dtype,
                                      (sourceOffset(o) + i0 * indexStride + d0) * es,
                                      {indexStride * es, 0, 0}),
                            ad * es,
                            {ai, 1, 1}});
      RefAttr table = em.device(scatter.getTable(), dtype, (o * tableRows * rowElems + d0) * es,
                                {rowBytes, 0, 0});
      step.compute = [=](StepCompute &sc) {
        sc.add(HwScatterOp::create(sc.b(), loc, table, rows, idx, ad * es, ai, tableRows, nullptr,
                                   0, nullptr, nullptr));
      };
      return step;
    };
    em.pipeline(core, loc, (uEnd - uBegin) * steps, stepAt);
  }
  return success();
}

} // namespace

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeScatterPlan(ScatterOp op,
                                                               const ::spyre::Arch &arch) {
  return analyzedPlan<ScatterPlan>(op, arch);
}
