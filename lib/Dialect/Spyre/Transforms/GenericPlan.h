//===- GenericPlan.h - running a spyre.generic on the card -----*- C++ -*-===//
//
// Private to the lowering: the plan of a generic (GenericPlan.cpp: analysis,
// tiles and LX slots; GenericLower.cpp: its instructions).
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_TRANSFORMS_GENERICPLAN_H
#define SPYRE_TRANSFORMS_GENERICPLAN_H

#include "GenericBody.h"
#include "PlanKinds.h"
#include "HwEmitter.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::spyre {


/// How an operand's tile is stored in LX and moved by DMA. Offsets are
/// relative to the tile origin; `rows` x `cols` is the actual tile.
struct TileLayout {
  int64_t bytes = 0;                  ///< LX bytes of a full tile
  int64_t rowStride = 0, colStride = 0; ///< LX bytes (0 broadcasts)
  int64_t rowBytes = 0;
  std::array<int64_t, 3> counts = {1, 1, 1};
  std::array<int64_t, 3> deviceStrides = {0, 0, 0}, lxStrides = {0, 0, 0};
};

/// Whether a tile whose columns lie `lc` elements apart (at most
/// `spanBytes`) moves each of its rows as one run over the gaps.
inline bool runsOverGaps(int64_t lr, int64_t lc, int64_t es, int64_t spanBytes) {
  return lc > 1 && lr != 1 && lc * es <= spanBytes;
}

/// Whether a tile of `rows` rows at a unit row stride, its columns `lc`
/// elements apart (at most `spanBytes`), is one run: the rows are the
/// elements between the columns, or, more of them than `lc`, overlap the
/// next columns (a strided convolution's taps read from its input rows).
inline bool narrowColumnsRun(int64_t lr, int64_t lc, int64_t rows, int64_t es,
                             int64_t spanBytes) {
  return lr == 1 && lc > 1 && lc * es <= spanBytes;
}

/// Element strides of the operand along the tile's row and col loops. A
/// tile that is read (not written) and whose columns lie a few elements
/// apart (lc * es <= spanBytes, e.g. a pooling window's strided slice)
/// moves each row as one run over the gaps, which the SFU then steps over:
/// element by element, every element would cost a whole stick. When its
/// rows are the ones between (unit row stride), the whole tile is one run.
/// A run is `extra` elements longer when other inputs read it shifted
/// (GenericPlan::shareRuns).
inline TileLayout layoutTile(int64_t lr, int64_t lc, int64_t tr, int64_t tc, int64_t rows,
                             int64_t cols, int64_t es, int64_t spanBytes = 0,
                             int64_t extra = 0) {
  TileLayout t;
  int64_t r = lr ? tr : 1, c = lc ? tc : 1;
  if (runsOverGaps(lr, lc, es, spanBytes)) {
    int64_t pitch = (tc - 1) * lc + 1 + extra;
    t.bytes = r * pitch * es;
    t.rowStride = lr ? pitch * es : 0;
    t.colStride = lc * es;
    t.rowBytes = ((cols - 1) * lc + 1 + extra) * es;
    t.counts = {lr ? rows : 1, 1, 1};
    t.deviceStrides = {lr * es, 0, 0};
    t.lxStrides = {pitch * es, 0, 0};
  } else if (narrowColumnsRun(lr, lc, tr, es, spanBytes) && extra == 0) {
    // Columns of a few elements each, one after the other (a [N, 8] matrix
    // read by columns: T5's position bias per head): the tile is one run
    // over the gaps between its columns' rows, which the SFU reads with a
    // row stride of one element. Column by column, each column would cost
    // a stick.
    t.bytes = ((tc - 1) * lc + tr) * es;
    t.rowStride = es;
    t.colStride = lc * es;
    t.rowBytes = ((cols - 1) * lc + rows) * es;
  } else if (lc == 1) { // rows of the tile are contiguous on the device
    int64_t pitch = tc + extra;
    t.bytes = r * pitch * es;
    t.rowStride = lr ? pitch * es : 0;
    t.colStride = es;
    t.rowBytes = (cols + extra) * es;
    t.counts = {lr ? rows : 1, 1, 1};
    t.deviceStrides = {lr * es, 0, 0};
    t.lxStrides = {pitch * es, 0, 0};
    // Whole rows that follow each other on the device move as one run: the
    // device charges every row that starts part-way into a stick one stick
    // more than it spans (rows of 32 f16 moved 4x their bytes).
    if (lr == tc && cols == tc && rows > 1 && extra == 0) {
      t.rowBytes = rows * cols * es;
      t.counts = {1, 1, 1};
      t.deviceStrides = t.lxStrides = {0, 0, 0};
    }
  } else if (lr == 1) { // columns are: store the tile transposed
    t.bytes = c * tr * es;
    t.rowStride = es;
    t.colStride = lc ? tr * es : 0;
    t.rowBytes = rows * es;
    t.counts = {lc ? cols : 1, 1, 1};
    t.deviceStrides = {lc * es, 0, 0};
    t.lxStrides = {tr * es, 0, 0};
  } else { // element by element
    t.bytes = r * c * es;
    t.rowStride = lr ? c * es : 0;
    t.colStride = lc ? es : 0;
    t.rowBytes = es;
    t.counts = {lc ? cols : 1, lr ? rows : 1, 1};
    t.deviceStrides = {lc * es, lr * es, 0};
    t.lxStrides = {es, c * es, 0};
  }
  return t;
}

/// Tiles to cut a core's share of rows into when it would fit LX as one.
/// Two tiles let one's loads and stores overlap the other's SFU work, which
/// saves up to half of the SFU time (callers add the transfer time two tiles
/// overlap: `overlappable`); each transfer then happens once more and waits
/// out the memory's latency on the core's DMA engine.
/// Two when the saving is more than twice those latencies: an RMSNorm of
/// 512 x 2048 f16 rows on 32 cores took 59.1 us as one tile per core and
/// 43.9 us as two. Cutting every generic in two made a rotary embedding,
/// mostly transfers, slower (157.4 -> 165.5 us); with this rule, 147.9.
/// With `upTo` 4, four when the further quarter of the SFU time they
/// overlap is more than the latencies of the two tiles more (row groups:
/// the 1B Llama's RMSNorms 51.9 -> 48.8 and 70.1 -> 66.1 us, a 4096 x 2048
/// f16 softmax on 32 cores 352.0 -> 306.4; eight tiles were slower again).
inline int64_t overlapDepth(double overlappable, int64_t transfers, const ::spyre::Arch &arch,
                            int64_t upTo = 2) {
  double latencies = double(transfers * arch.dmaLatencyCycles);
  if (overlappable / 2 <= 2.0 * latencies)
    return 1;
  return upTo >= 4 && overlappable / 4 > 2.0 * latencies ? 4 : 2;
}

/// An operand's tile with the planes of the generic's plane loop (a third
/// tiled loop, GenericPlan.cpp). Merged: each plane continues the operand's
/// device rows (a rotary embedding's two halves of a head), so a row of all
/// planes moves as one run; `reversed` when the planes run down the row (the
/// rotated half). Stacked: one copy of the two-dimensional layout per plane,
/// or a single one that every plane reads when the operand does not vary
/// along the plane loop. An operand that does not vary along the cols but
/// is contiguous along the planes (an upsampling's input, read once per
/// repeat) moves a run of planes per row, each plane's view one element of
/// it repeated along the cols.
struct PlanedLayout {
  TileLayout tile;          ///< of all planes (transfers, LX bytes)
  int64_t planeBytes = 0;   ///< LX bytes from one plane's view to the next
  int64_t colStride = 0;    ///< of a plane's view
  int64_t deviceShift = 0;  ///< elements from plane 0's origin to the run's start
  int64_t viewShift = 0;    ///< LX bytes from a plane's stretch to its view's origin
  bool reversed = false;
  int64_t viewOffset(int64_t p, int64_t planes) const {
    return (reversed ? planes - 1 - p : p) * planeBytes + viewShift;
  }
};

class GenericPlan : public OpPlan {
public:
  /// How the generic runs: alone, as a fused group's member or as a
  /// product's epilogue (whose tiles another plan chooses). Only a generic
  /// alone tiles a plane loop; a member's inputs that are the kernel's
  /// arguments (never another member's results) may share runs too.
  enum class Role { alone, member, epilogue };
  /// `groupCol`: a group's column loop, which an elementwise member takes
  /// for its own where it can (see analyze).
  GenericPlan(GenericOp op, const ::spyre::Arch &arch, Role role = Role::epilogue,
              int groupCol = -1)
      : OpPlan(op, arch), generic(op), role(role), groupCol(groupCol) {}
  LogicalResult analyze();

  SPYRE_OPPLAN_OVERRIDES

  /// The tile grid and LX slots of a tile, computed once per lowering.
  struct Geometry {
    ArrayRef<int64_t> tile, lx;
    SmallVector<LxSlot> slots;
    llvm::StringMap<unsigned> slotIndex;
    int64_t tr = 1, tc = 1;
    SmallVector<int64_t> ntiles, par, red; ///< tiles per loop; parallel, reduction loops
    int64_t groups = 1, perGroup = 1;      ///< output tiles; reduction tiles of each
    int64_t slotAt(StringRef name, int64_t copy) const {
      unsigned i = slotIndex.lookup(name);
      return lx[i] + copy * slots[i].bytes;
    }
  };
  Geometry geometry(ArrayRef<int64_t> tile, ArrayRef<int64_t> lx) const;

  /// What changes when the op runs as a member of a fused group: inputs read
  /// from another member's LX result (no load) and outputs that stay in LX
  /// (no store).
  struct Overrides {
    DenseMap<unsigned, RefAttr> inputViews;
    llvm::SmallDenseSet<unsigned> internalOutputs;
  };
  /// Step `step` of output tile `group`: its loads, compute and stores. With
  /// `results`, also the LX view of every output's final value; with
  /// `inputViews`, the view of every input.
  /// With `heldOnCore`, the inputs the core loads once (heldOnCore).
  TileStep buildStep(HwEmitter &em, const Geometry &g, int64_t group, int64_t step,
                     int64_t index, const Overrides *overrides = nullptr,
                     SmallVectorImpl<RefAttr> *results = nullptr,
                     SmallVectorImpl<RefAttr> *inputViews = nullptr,
                     ArrayRef<bool> heldOnCore = {}) const;
  /// Per input, whether every step of a core running output tiles
  /// [firstGroup, endGroup) loads the same tile of it: the core loads it once
  /// and its steps read that copy (a rotary embedding's cos and sin, the
  /// same for every head at a core's positions).
  SmallVector<bool> heldOnCore(const Geometry &g, int64_t firstGroup, int64_t endGroup) const;

  /// The instructions of plane `p` of a step (buildStep) over its views.
  void computePlane(StepCompute &sc, HwEmitter &em, const Geometry &g, Block &block,
                    ArrayRef<int64_t> origin, int64_t p, int64_t rows, int64_t cols, bool first,
                    bool last, ArrayRef<RefAttr> inputViews, ArrayRef<RefAttr> outputViews,
                    ArrayRef<RefAttr> accViews, ArrayRef<RefAttr> bestViews,
                    ArrayRef<RefAttr> stagingViews) const;

  /// The op's SFU cycles when `cores` cores share it (the cost model's
  /// estimate) and the transfers of one of its tiles (an input or output
  /// each): what `overlapDepth` weighs.
  double sfuCycles(int64_t cores) const;
  int64_t transfersPerTile() const {
    return int64_t(inputs.size() + outputs.size()) +
           llvm::count_if(outputs, [&](const Output &out) { return rewritesRuns(out); });
  }

  /// Whether input `k` reads the same elements in every tile of `tile`'s
  /// grid (a broadcast scalar, per-column values such as rotary
  /// frequencies): it is then loaded once per core, into one copy of its
  /// slot, and stays there for the core's later tiles.
  bool isResident(unsigned k, ArrayRef<int64_t> tile) const;

  // What a fused group needs to know about a member.
  /// Whether input `k` leads or follows shared runs.
  bool sharesRuns(unsigned k) const { return runLeader[k] >= 0 || runExtra[k] > 0; }
  /// Every input reads its own runs (a fused group reads some elsewhere).
  void dropSharedRuns() {
    llvm::fill(runLeader, -1);
    llvm::fill(runShift, 0);
    llvm::fill(runExtra, 0);
  }
  GenericOp getGeneric() const { return generic; }
  ArrayRef<int64_t> getSizes() const { return sizes; }
  ArrayRef<bool> getReductionLoops() const { return reduction; }
  /// Tiles of the parallel loops other than `skip` (-1: all).
  int64_t parallelTiles(ArrayRef<int64_t> tile, int skip) const;
  int getRowLoop() const { return row; }
  int getColLoop() const { return col; }
  /// Whether the generic, alone, would tile a plane loop (a member does
  /// not; its col loop is the one it would have alone).
  bool tilesPlanesAlone() const { return choosePlane() >= 0; }
  /// Whether an output leaves gaps of a few elements between the ones it
  /// writes (every other element: an interleave). Alone, the generic moves
  /// runs over them (rewritesRuns); in a group, element by element.
  bool writesBetweenGaps() const {
    return llvm::any_of(outputs, [&](const Output &out) { return leavesGaps(out); });
  }
  const LinearAccess &getInputAccess(unsigned i) const { return inputs[i]; }
  const LinearAccess &getOutputAccess(unsigned i) const { return outputs[i].access; }
  // What a matmul epilogue needs to know about the generic it runs.
  uint8_t getInputType(unsigned i) const { return inputTypes[i]; }
  uint8_t getOutputType(unsigned i) const { return outputs[i].dtype; }
  size_t getNumOutputs() const { return outputs.size(); }
  const BodyPlan &getBodyPlan() const { return body; }

private:
  struct Output {
    LinearAccess access;
    uint8_t dtype;
    CombinerKind combiner; ///< of the yielded value that writes it
    unsigned value;        ///< index of that yielded value
    unsigned part;         ///< 0, or 0..2 for welford (mean, m2, count)
  };
  /// The output written by part `part` of yielded value `value`.
  unsigned outputOf(unsigned value, unsigned part = 0) const {
    for (auto [i, out] : llvm::enumerate(outputs))
      if (out.value == value && out.part == part)
        return unsigned(i);
    llvm_unreachable("no such output");
  }
  bool reduces() const { return llvm::is_contained(reduction, true); }
  /// The parallel loop whose planes continue the first output's rows past
  /// the col loop when those rows are shorter than a stick; -1 if none.
  int choosePlane() const;
  /// Otherwise, once the row loop is chosen, the parallel loop whose
  /// planes continue the first output (or an input's rows) past whole
  /// tiles of rows x cols, when such a tile is a few sticks (an image's
  /// rows of windows: Swin's window merge and partition, a 7 x 64 block
  /// per window); -1 if none.
  int chooseBlockPlane() const;
  /// Device bytes per point that tiles of whole rows x cols x planes of
  /// `loop` move, every contiguous run of an operand whole sticks.
  double blockPlaneBytes(int loop) const;
  /// Whether an input reads loop `loop`'s planes in reverse order, each a
  /// whole col row (a rotary embedding's rotated halves).
  bool readsPlanesReversed(int loop) const;
  int64_t planeSize(ArrayRef<int64_t> tile) const { return plane < 0 ? 1 : tile[plane]; }
  /// The layout of an operand's tile of `rows` x `cols` x `planes` (at most
  /// the tile's); `span` as for layoutTile.
  PlanedLayout layoutPlanes(const LinearAccess &a, int64_t es, ArrayRef<int64_t> tile,
                            int64_t rows, int64_t cols, int64_t planes, int64_t span,
                            int64_t extra = 0) const;
  /// Inputs that read another input's rows shifted by a few elements (a
  /// pooling window's taps along a row): each follows the one with the
  /// lowest base, whose runs are loaded that many elements longer, and
  /// reads its copy.
  void shareRuns();
  int64_t rowSize(ArrayRef<int64_t> tile) const { return row < 0 ? 1 : tile[row]; }
  /// Replaces the densest row loop by one giving far fewer tiles per core.
  void chooseRowLoop();
  /// Row-tile granule: whole sticks of operands whose rows run along the row loop.
  int64_t rowStickElems() const;
  /// Whether an operand's device rows run along the row loop (a transpose's
  /// input, a column reduction's): a row tile short of a stick pads them.
  bool runsAlongRows(const LinearAccess &a) const;
  /// Whether an operand's device rows run along `loop` (the plane loop, or
  /// a candidate for it) and not along the cols: layoutPlanes moves a run
  /// of planes per row and col.
  bool runsAlongPlanes(const LinearAccess &a, int loop) const;
  /// Whether output `out` moves as runs over the gaps between its elements
  /// (a strided write: an interleave, a strided convolution's gradient
  /// spread on its input's grid): a tile loads its runs, the SFU writes
  /// every element it computes into them, and the runs go back with the
  /// gaps as loaded. Element by element, each element would cost a stick.
  /// Only for a generic alone, which the kernel's other ops do not run
  /// beside, and only where no two tiles' runs overlap.
  bool rewritesRuns(const Output &out) const;
  /// Whether `out` writes elements a few apart along the col loop.
  bool leavesGaps(const Output &out) const;
  /// The `span` layoutTile gets for output `out`.
  int64_t outputSpan(const Output &out) const {
    return rewritesRuns(out) ? arch.stickBytes : 0;
  }
  /// Estimated cycles with `tile` on `cores`: the larger of the device bus
  /// (padded rows included), the DMA ports of the cores with a tile and
  /// their SFU work, `sfu` being the op's SFU cycles on `cores` cores
  /// (sfuCycles, computed once by the caller).
  double tileCycles(ArrayRef<int64_t> tile, int64_t cores, double sfu) const;
  /// Bytes the device reads and writes for the whole generic in `tile`s.
  std::pair<double, double> deviceBytes(ArrayRef<int64_t> tile) const;
  /// The largest tile whose rows are whole granules, with at least `depth`
  /// tiles per core (`overlapDepth`) where the sizes allow.
  SmallVector<int64_t> tileWithRowGranule(int64_t cores, int64_t depth, int64_t lxBytes,
                                          int64_t granule) const;
  uint8_t accType(const Output &out) const;
  bool needsStaging(const Output &out) const { return accType(out) != out.dtype; }
  int64_t fitsBytes(ArrayRef<int64_t> tile) const {
    int64_t total;
    assignLx(slots(tile), arch.stickBytes, total);
    return total;
  }

  mutable GenericOp generic;
  SmallVector<int64_t> sizes;
  SmallVector<bool> reduction;
  Role role;
  int groupCol = -1;
  int row = -1, col = 0, plane = -1;
  /// Whether `plane` is chooseBlockPlane's: tiles of whole rows and cols.
  bool blockPlane = false;
  SmallVector<LinearAccess> inputs;
  SmallVector<uint8_t> inputTypes;
  SmallVector<Output> outputs;
  /// Per input (shareRuns): the input whose runs it reads (-1: its own), the
  /// shift in elements into them, and the elements its own runs are longer.
  SmallVector<int> runLeader;
  SmallVector<int64_t> runShift, runExtra;
  BodyPlan body;
};

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_GENERICPLAN_H
