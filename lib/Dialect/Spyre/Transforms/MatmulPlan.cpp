//===- MatmulPlan.cpp - running matmul and batch_matmul on the card -------===//
//
// Output tiles (batch, tm rows, tn cols) are shared among a grid of cores
// (batch x rows x columns); each core walks K in tk-deep steps, accumulating
// in an f32 tile in LX, and stores the tile (converted to the output type on
// the SFU when it is 16-bit) after the last step. The cores of a grid row
// load the same lhs panel, those of a grid column the same rhs panel, at the
// same step of equally long programs: the card reads such a broadcast
// operand once for all of them (SPYRE_HW.md), so the grid, not each core,
// sets the device traffic. A grid row's cores divide the columns in whole
// sticks (ColumnSplit), so that tiles of near-equal width keep the cores
// as evenly loaded as the sticks allow.
//
// A 16-bit output is converted in place: the SFU narrows the f32 tile into
// the first half of its own slot (element i goes to byte 2i, after element
// i / 2 <= i has been read), so LX holds no staging copy and the operand
// panels get the room. When all of K fits one step, the PT writes the
// output type itself (it rounds its f32 sum on store, as the SFU would),
// and consecutive output tiles of a core that share an operand panel keep
// it in LX: the walk runs along the columns (the lhs panel stays) or the
// rows (the rhs panel stays), whichever reads fewer bytes. When K takes
// several steps, two consecutive tiles that share a panel walk K together
// (A0 B0 A1 B1 ... A(kt-2) A(kt-1) B(kt-2) B(kt-1)), each step of the shared
// panel loaded once for both, the first tile finishing two steps early so
// that its store overlaps the second's last steps.
//
// A matmul grouped with its epilogue (a spyre.fused of the matmul and one
// elementwise spyre.generic reading the product, spyre-fuse-epilogue) runs
// the generic's body on each output tile after its last K step, in place of
// the conversion: it reads the f32 accumulator, the epilogue's other inputs
// loaded per tile (a bias row, a residual tile), and writes the output type
// in place into the accumulator's slot, from which the tile is stored. The
// body's temporaries take strips of `er` rows (the fourth tile size), so
// that they fit beside the operand panels.
//
// Two matmuls of the same lhs under one epilogue (a gated MLP's
// silu(x @ Wg) * (x @ Wu)) run as one product of twice the columns: an
// output tile's rhs panel holds both rhs' columns side by side, one PT
// instruction per K step fills an accumulator whose rows hold both
// products, and the epilogue combines them. The lhs panel is loaded once
// for both, and neither product reaches device memory.
//
//===----------------------------------------------------------------------===//

#include "GenericPlan.h"
#include "PlanKinds.h"
#include "HwEmitter.h"
#include "spyre-mlir/Isa/Isa.h"
#include "llvm/ADT/DenseSet.h"

#include <numeric>

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

namespace {

/// How the cores of a grid row share the output's columns: each takes a
/// run of whole units (sticks, so that every tile starts on a stick of the
/// output and of a row-major rhs; whole tiles when a tile is not a whole
/// number of sticks), as even as the units allow, and cuts it into tiles of
/// at most `tn` columns and near-equal width. Whole tiles per core would
/// leave 12800 columns on 16 cores with 256-column tiles at four tiles on
/// the busiest core; sticks give it 13 sticks in three tiles (5 + 4 + 4).
struct ColumnSplit {
  int64_t n, unit, units, perTile;
  ColumnSplit(int64_t n, int64_t tn, int64_t stick)
      : n(n), unit(tn % stick == 0 ? stick : tn), units(llvm::divideCeil(n, unit)),
        perTile(tn / unit) {}
  /// Units [first, second) of core column `cj` of `gn`.
  std::pair<int64_t, int64_t> block(int64_t gn, int64_t cj) const {
    return {units * cj / gn, units * (cj + 1) / gn};
  }
  int64_t tiles(std::pair<int64_t, int64_t> b) const {
    return llvm::divideCeil(b.second - b.first, perTile);
  }
  /// Column offset and width of tile `i` of block `b`.
  std::pair<int64_t, int64_t> columns(std::pair<int64_t, int64_t> b, int64_t i) const {
    int64_t w = b.second - b.first, count = tiles(b);
    int64_t begin = (b.first + w * i / count) * unit;
    int64_t end = std::min(n, (b.first + w * (i + 1) / count) * unit);
    return {begin, end - begin};
  }
  /// The busiest core's tiles and their widest (or their mean width), when
  /// `gn` cores share the columns.
  std::pair<int64_t, int64_t> busiest(int64_t gn, bool mean = false) const {
    int64_t w = llvm::divideCeil(units, gn), count = llvm::divideCeil(w, perTile);
    if (mean)
      return {count, llvm::divideCeil(std::min<int64_t>(n, w * unit), count)};
    return {count, std::min<int64_t>(n, llvm::divideCeil(w, count) * unit)};
  }
};

/// One matmul operand in device memory: element strides of its two matrix
/// dimensions and of the batch, and whether LX holds its tiles transposed.
struct Operand {
  Value value;
  uint8_t dtype;
  int64_t base = 0; ///< element offset of the matrix in its buffer
  int64_t batchStride = 0, outerStride = 0, innerStride = 0;
  bool transposed = false; ///< LX holds (inner x outer) rather than (outer x inner)
};

class MatmulPlan : public OpPlan {
public:
  MatmulPlan(Operation *op, const ::spyre::Arch &arch) : OpPlan(op, arch) {}
  LogicalResult analyze();

  SPYRE_OPPLAN_OVERRIDES
  SmallVector<SmallVector<int64_t>> tileCandidates(int64_t cores, int64_t lxBytes,
                                                   int64_t count) const override;
  std::optional<double> estimatedCycles(int64_t cores, int64_t lxBytes) const override {
    auto ranked = rankTiles(cores, lxBytes, /*threeSticks=*/false);
    if (ranked.empty())
      return std::nullopt;
    return ranked.front().first;
  }

private:
  LogicalResult analyzeEpilogue(FusedOp fused);
  /// The tiles that fit `lxBytes`, fastest first by estimate on their best
  /// grid of `cores`: sizes of 2^i sticks (and whole dimensions), and with
  /// `threeSticks` also 3 x 2^i sticks, which divide some dimensions into
  /// fewer, fuller tiles but which the estimate ranks less reliably.
  SmallVector<std::pair<double, SmallVector<int64_t>>>
  rankTiles(int64_t cores, int64_t lxBytes, bool threeSticks) const;
  /// The tile tm x tn x tk if it fits `lxBytes`; with an epilogue, with the
  /// tallest strip of its temporaries that fits too. Empty if none does.
  SmallVector<int64_t> fitting(int64_t tm, int64_t tn, int64_t tk, int64_t lxBytes) const;
  bool staged() const { return out.dtype != uint8_t(ISA::DType::f32); }
  /// All of K in one step: the PT writes the output type itself (not under
  /// an epilogue, which reads the f32 sum).
  bool direct(ArrayRef<int64_t> tile) const {
    return tile[2] >= k && !accumulate && !epilogue;
  }
  /// SFU cycles of the epilogue over `rows` x `cols` in strips of `er` rows.
  double epilogueCycles(int64_t rows, int64_t cols, int64_t er) const;
  /// Whether the body reads the product in or after the instruction that
  /// writes its output (an added bias), rather than only before it (a
  /// rotary embedding's products of the halves, then their sum): the
  /// epilogue's `readsProductAsItWrites`, found once by analyzeEpilogue.
  bool findReadsProductAsItWrites() const;
  /// The strips [s, e) the epilogue runs rows [r0, r1) of a tile in: `er`
  /// rows each, except where `blocks` blocks of an N-D epilogue narrow the
  /// product in place and read it as they write. A strip's instructions
  /// run op by op over the blocks, and the 16-bit output of row r lands on
  /// the f32 product of row r / 2 (or earlier): had a strip starting at row
  /// s more than s rows (one at row 0), a block's output would overwrite a
  /// product row of the strip that a later block had not read yet
  /// (MobileViT's value projection of one token, its bias added per head:
  /// 4 rows in one strip, the second head of row 0 read the first head's
  /// outputs of row 1). Rows 0, 1, 2-3, 4-7, ... then er at a time.
  SmallVector<std::pair<int64_t, int64_t>> epilogueStrips(int64_t r0, int64_t r1, int64_t er,
                                                          int64_t blocks) const;
  /// Emits the epilogue over rows [r0, r1) and columns [c0, c1) of the
  /// output tile whose accumulator is at LX offset `accAt`, each product's
  /// columns `productCols` after the previous one's in its rows; `n0` is the
  /// tile's first column of the output. An N-D epilogue runs over every
  /// block of each strip, op by op, so that no block's output, written in
  /// place over the product, is written before another block has read the
  /// product there.
  void emitEpilogue(HwEmitter &em, StepCompute &sc, Location loc, ArrayRef<int64_t> tile,
                    int64_t accAt, ArrayRef<RefAttr> inputViews, ArrayRef<int64_t> tempAt,
                    int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t productCols,
                    int64_t n0) const;
  /// Accumulating into a 16-bit output widens its current content into the
  /// f32 tile, which cannot be done in place (the wider element would
  /// overwrite one not yet read): only then a staging slot of its own.
  bool staging() const { return staged() && accumulate; }
  int64_t esOf(const Operand &o) const { return deviceDTypeBytes(o.dtype); }
  ColumnSplit columnSplit(int64_t tn) const {
    int64_t stick = arch.stickBytes / std::min(esOf(out), esOf(rhs));
    // Tiles of an N-D epilogue start on whole blocks.
    return ColumnSplit(n, tn, epiBlock ? int64_t(std::lcm(stick, epiBlock)) : stick);
  }
  /// Few output rows (a decode step's GEMV): every core's tiles read the
  /// same lhs rows, so the whole of K of them is loaded once per core into
  /// one slot rather than a K step at a time: each load would pay the DMA
  /// latency for a few hundred bytes. Only when that panel is small beside
  /// the rhs tiles it leaves room for.
  bool lhsWhole(ArrayRef<int64_t> tile) const {
    return batch == 1 && m <= tile[0] && k > tile[2] &&
           tile[0] * llvm::alignTo(k, tile[2]) * esOf(lhs) <= arch.lxUsableBytes() / 8;
  }
  /// The lhs slot's extent along K: whole K steps for a whole-K panel.
  int64_t lhsKSpan(ArrayRef<int64_t> tile) const {
    return lhsWhole(tile) ? int64_t(llvm::alignTo(k, tile[2])) : tile[2];
  }

  /// Cores along the batch, the output rows and the output columns.
  struct Grid {
    int64_t b = 1, m = 1, n = 1;
  };
  /// Whether a one-row tile's last step (`ak` deep, `cols` columns) ends
  /// sooner as two column halves: when its rhs panel's load paces the run,
  /// half the product is left after the last load, but the second half's
  /// load pays the DMA latency again.
  bool splitsColumns(ArrayRef<int64_t> tile, int64_t ak, int64_t cols, Grid grid) const;
  /// Whether a core walks its output tiles down the rows (the rhs panel
  /// stays in LX from tile to tile) rather than along the columns (the lhs
  /// panel stays). Panels stay only when all of K fits one step.
  bool walksRows(ArrayRef<int64_t> tile, Grid grid) const;
  /// Estimated cycles of the op with `tile` on `grid`.
  double estimate(ArrayRef<int64_t> tile, Grid grid) const;
  /// Core `core`'s place (batch block, grid row, grid column) when the
  /// cores are numbered down the grid's columns or along its rows.
  std::array<int64_t, 3> position(Grid grid, int64_t core, bool columnsTogether) const;
  /// How many of a grid's cores run behind each memory port of a program on
  /// `cores` cores: as many behind each, so that a grid on fewer cores than
  /// the program's does not leave a port idle.
  int64_t coresPerPort(Grid grid, int64_t cores) const;
  /// The program's core that the grid's core `core` runs on.
  int64_t physicalCore(Grid grid, int64_t cores, int64_t core) const;
  /// Whether numbering the cores down the grid's columns leaves the busier
  /// memory port fewer panel bytes to carry than numbering them along its
  /// rows: a port carries each panel its cores load, once for all of them.
  bool numbersDownColumns(Grid grid, int64_t cores) const;
  /// Whether the busiest core of `grid` addresses at most the card's
  /// per-core span of each operand, its batches, rows and columns counted
  /// whole (Qwen2-MoE's 60 experts' weights, 692 MB, need the batches
  /// divided).
  bool withinSpan(ArrayRef<int64_t> tile, Grid grid) const;
  /// The grid of at most `cores` cores with the least estimated time for
  /// `tile`, within the span if any grid is; `time` gets that estimate.
  Grid chooseGrid(int64_t cores, ArrayRef<int64_t> tile, double &time) const;

  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool accumulate = false;
  /// The spyre.matmul (the op itself, or the first matmul of a fused
  /// group) and the second matmul of a group, which shares its lhs.
  Operation *mm = nullptr, *mm2 = nullptr;
  /// lhs is (m x k), rhs (k x n), out (m x n): "outer" is the first. With an
  /// epilogue, out is the generic's output. rhs2 is the second matmul's,
  /// and out2 its output when the two products have no epilogue.
  Operand lhs, rhs, rhs2, out, out2;
  /// Products computed side by side per output tile (1, or 2 with mm2).
  int64_t products = 1;
  /// The outputs an output tile stores: the epilogue's, or each product's.
  int64_t outputs() const { return epilogue ? 1 : products; }

  /// The epilogue's generic, its plan, and per input which product it is
  /// (read from the accumulator), or -1 when it is loaded per output tile.
  mutable GenericOp epilogue;
  std::unique_ptr<GenericPlan> epiPlan;
  SmallVector<int64_t> productOf;
  bool readsProductAsItWrites = false;
  /// An epilogue over more loops than rows and columns (rows, then column
  /// loops whose sizes multiply to n: a rotary embedding's heads, halves
  /// and elements) runs on blocks of its innermost loop's columns, one per
  /// value of the other column loops. An output tile then holds whole
  /// blocks of `epiBlock` columns (the outermost column loop's), within
  /// which its reads of the product may move (to the other half of a head).
  /// 0 for an epilogue over rows and columns.
  int64_t epiBlock = 0;
  SmallVector<int64_t> epiColSizes;
  /// A block of such an epilogue: its first column in the output tile and
  /// the values of the column loops (the outermost counted from the tile's
  /// first block, the innermost 0).
  struct EpiBlock {
    int64_t col;
    SmallVector<int64_t> loops;
  };
  /// The blocks of an output tile's columns [c0, c1), whole epiBlocks.
  SmallVector<EpiBlock> epilogueBlocks(int64_t c0, int64_t c1) const;
  /// Elements from the first that a row of a `tn`-column tile touches of
  /// an N-D epilogue's loaded input accessed by `a`.
  int64_t epiSpan(const LinearAccess &a, int64_t tn) const;
  /// The element `a` reads at row 0 of block `loops`, less its base.
  static int64_t blockOffset(const LinearAccess &a, ArrayRef<int64_t> loops) {
    int64_t offset = 0;
    for (auto [i, v] : llvm::enumerate(loops))
      offset += a.strides[i + 1] * v;
    return offset;
  }
  LogicalResult analyzeBlocks();
};

int64_t MatmulPlan::parallelUnits() const { return batch * m * n; }

LogicalResult MatmulPlan::analyze() {
  auto fused = dyn_cast<FusedOp>(op);
  mm = op;
  if (fused) {
    auto matmuls = llvm::to_vector(fused.getBody().front().getOps<MatmulOp>());
    mm = matmuls.front().getOperation();
    if (matmuls.size() == 2) {
      mm2 = matmuls.back().getOperation();
      products = 2;
    }
  }
  Value lhsValue = mm->getOperand(0), rhsValue = mm->getOperand(1), outValue = mm->getOperand(2);
  bool tl = mm->hasAttr("transpose_lhs"), tr = mm->hasAttr("transpose_rhs");
  accumulate = mm->hasAttr("accumulate");
  for (Value v : {lhsValue, rhsValue, outValue}) {
    auto type = cast<BufferType>(v.getType());
    if (!type.hasStaticShape())
      return op->emitError() << "cannot run on the card: operand " << type
                             << " has a dynamic shape; specialise the kernel for the size";
    Type elt = type.getElementType();
    if (!elt.isF16() && !elt.isBF16() && !elt.isF32())
      return op->emitError() << "cannot run on the card: the matrix unit takes f16, bf16 "
                                "and f32, not "
                             << elt;
    if (LayoutAttr layout = type.getLayout(); layout && layout.getStick())
      return op->emitError() << "cannot run on the card: operand " << type
                             << " is stored in sticks, which tiling does not address yet";
  }
  auto describe = [&](Value v, bool swap, Operand &o, StringRef name) -> LogicalResult {
    auto type = cast<BufferType>(v.getType());
    SmallVector<int64_t> strides = elementStrides(type);
    int64_t rank = type.getRank();
    o.value = v;
    o.dtype = deviceDType(type.getElementType());
    o.batchStride = rank == 3 ? strides[0] : 0;
    int64_t outerDim = swap ? rank - 1 : rank - 2, innerDim = swap ? rank - 2 : rank - 1;
    o.outerStride = strides[outerDim];
    o.innerStride = strides[innerDim];
    if (o.innerStride == 1)
      o.transposed = false;
    else if (o.outerStride == 1)
      o.transposed = true;
    else
      return op->emitError() << "cannot run on the card: " << name
                             << " has no contiguous matrix dimension";
    return success();
  };
  auto lhsType = cast<BufferType>(lhsValue.getType());
  auto outType = cast<BufferType>(outValue.getType());
  int64_t rank = lhsType.getRank();
  batch = rank == 3 ? lhsType.getDimSize(0) : 1;
  m = outType.getDimSize(rank - 2);
  n = outType.getDimSize(rank - 1);
  k = lhsType.getDimSize(tl ? rank - 2 : rank - 1);
  // rhs: outer is K and inner N, so a transposed rhs swaps them.
  if (failed(describe(lhsValue, tl, lhs, "the lhs")) ||
      failed(describe(rhsValue, tr, rhs, "the rhs")) ||
      failed(describe(outValue, false, out, "the output")))
    return failure();
  if (out.transposed)
    return op->emitError() << "cannot run on the card: the output must be row-major";
  if (mm2) {
    // The verifier checked the shared lhs; the second product must be the
    // first's shape and layout for their columns to share tiles.
    if (mm2->getOperand(1).getType() != rhsValue.getType() ||
        mm2->getOperand(2).getType() != outValue.getType() ||
        mm2->hasAttr("transpose_rhs") != tr || mm2->hasAttr("accumulate") != accumulate)
      return op->emitError() << "cannot compute two products side by side: their rhs or "
                                "outputs differ in shape, type or layout";
    if (failed(describe(mm2->getOperand(1), tr, rhs2, "the second rhs")))
      return failure();
  }
  if (batch == 0 || m == 0 || n == 0 || k == 0)
    return op->emitError() << "cannot run on the card: an empty matmul";
  if (fused && !fused.getBody().front().getOps<GenericOp>().empty())
    return analyzeEpilogue(fused);
  if (fused) {
    // Two products, each to an output of its own (the verifier checked
    // there are two and no generic).
    if (accumulate)
      return op->emitError() << "cannot compute two products side by side into outputs "
                                "they accumulate into";
    Value out2Value = mm2->getOperand(2);
    if (out2Value == outValue || out2Value == lhsValue || out2Value == rhsValue ||
        outValue == mm2->getOperand(1))
      return op->emitError() << "cannot compute two products side by side: one writes an "
                                "operand of the other";
    return describe(out2Value, false, out2, "the second output");
  }
  return success();
}

LogicalResult MatmulPlan::analyzeEpilogue(FusedOp fused) {
  epilogue = *fused.getBody().front().getOps<GenericOp>().begin();
  auto refuse = [&]() { return op->emitError() << "cannot run the epilogue on the output tile: "; };
  SmallVector<Value, 2> productValues = {mm->getOperand(2)};
  if (mm2)
    productValues.push_back(mm2->getOperand(2));
  if (accumulate)
    return refuse() << "the matmul accumulates into its output";
  for (Value product : productValues) {
    auto alloc = product.getDefiningOp<AllocOp>();
    if (!alloc || alloc->getParentOp() != fused)
      return refuse() << "the product is not a temporary of the group";
    for (Operation *user : product.getUsers())
      if (user != mm && user != mm2 && user != epilogue.getOperation() && !isa<DeallocOp>(user))
        return refuse() << "the product is read by '" << user->getName() << "'";
  }
  epiPlan = std::make_unique<GenericPlan>(epilogue, arch);
  if (failed(epiPlan->analyze()))
    return failure();
  ArrayRef<int64_t> sizes = epiPlan->getSizes();
  int64_t columns = 1;
  for (int64_t size : sizes.drop_front())
    columns *= size;
  if (sizes.size() < 2 || sizes[0] != m || columns != n ||
      llvm::is_contained(epiPlan->getReductionLoops(), true))
    return refuse() << "the generic is not elementwise over the " << m << " x " << n
                    << " product";
  if (sizes.size() > 2) {
    epiColSizes.assign(sizes.begin() + 1, sizes.end());
    epiBlock = n / sizes[1];
  }
  if (epiPlan->getNumOutputs() != 1)
    return refuse() << "the generic has " << epiPlan->getNumOutputs() << " outputs, not one";
  Value outValue = epilogue.getOutputs()[0];
  if (outValue == mm->getOperand(0) || outValue == mm->getOperand(1) ||
      (mm2 && outValue == mm2->getOperand(1)))
    return refuse() << "the generic writes an operand of the matmul";
  const LinearAccess &written = epiPlan->getOutputAccess(0);
  // Row-major columns: each column loop's stride is the product of the
  // sizes inside it.
  SmallVector<int64_t> natural(sizes.size(), 1);
  for (size_t i = sizes.size() - 1; i > 1; --i)
    natural[i - 1] = natural[i] * sizes[i];
  if (written.strides[0] < n ||
      ArrayRef<int64_t>(written.strides).drop_front() != ArrayRef<int64_t>(natural).drop_front())
    return refuse() << "the generic does not write row-major rows of the output";
  if (deviceDTypeBytes(epiPlan->getOutputType(0)) > 4)
    return refuse() << "the output's elements are wider than the f32 accumulator's";
  out.value = outValue;
  out.dtype = epiPlan->getOutputType(0);
  out.base = written.base;
  out.outerStride = written.strides[0];
  out.innerStride = 1;
  out.transposed = false;
  for (auto [i, input] : llvm::enumerate(epilogue.getInputs())) {
    const LinearAccess &reads = epiPlan->getInputAccess(unsigned(i));
    const Value *found = llvm::find(productValues, input);
    productOf.push_back(found == productValues.end() ? -1 : found - productValues.begin());
    if (productOf.back() >= 0 && !epiBlock &&
        (reads.base != 0 || reads.strides[0] != n || reads.strides[1] != 1))
      return refuse() << "the generic reads the product other than at the output's index";
    if (input == outValue && (reads.base != written.base || reads.strides != written.strides))
      return refuse() << "the generic reads its output other than at the index it writes";
  }
  if (epiBlock && failed(analyzeBlocks()))
    return failure();
  // The output is written into the accumulator's slot, over elements of the
  // product already read: no op after the one that writes it may read the
  // product.
  const BodyPlan &body = epiPlan->getBodyPlan();
  bool written_ = false;
  for (auto &[bodyOp, vop] : body.ops) {
    if (isa<IndexExprOp>(bodyOp) && !epiBlock)
      return refuse() << "spyre.index_expr in the body";
    for (Value operand : bodyOp->getOperands()) {
      auto it = body.values.find(operand);
      if (written_ && it != body.values.end() && it->second.kind == BodyValue::Kind::input &&
          productOf[it->second.index] >= 0)
        return refuse() << "the body reads the product after writing the output";
    }
    written_ |= body.values.at(bodyOp->getResult(0)).kind == BodyValue::Kind::output;
  }
  readsProductAsItWrites = findReadsProductAsItWrites();
  return success();
}

LogicalResult MatmulPlan::analyzeBlocks() {
  auto refuse = [&]() { return op->emitError() << "cannot run the epilogue on the output tile: "; };
  const int64_t loops = int64_t(epiColSizes.size());
  // Every op takes an instruction per block: blocks of a few columns (pairs
  // of a stacked output) would issue more instructions than they move.
  constexpr int64_t kMinBlockColumns = 16;
  if (epiColSizes.back() < kMinBlockColumns)
    return refuse() << "its innermost loop runs over " << epiColSizes.back()
                    << " columns, fewer than " << kMinBlockColumns;
  for (auto [i, product] : llvm::enumerate(productOf)) {
    const LinearAccess &a = epiPlan->getInputAccess(unsigned(i));
    if (product < 0) {
      // A loaded input's rows are copied as runs of the elements a tile's
      // row touches.
      if (llvm::any_of(a.strides, [](int64_t st) { return st < 0; }))
        return refuse() << "the generic reads input " << i << " backwards";
      continue;
    }
    // The product is read in its rows, within the outermost column block
    // of the element written: along the innermost loop, and each loop in
    // between forwards or backwards (the other half of a head).
    bool inBlock = a.strides[0] == n && a.strides[1] == epiBlock && a.strides.back() == 1;
    int64_t low = a.base, high = a.base;
    for (int64_t l = 1; l < loops && inBlock; ++l) {
      int64_t natural = 1;
      for (int64_t j = l + 1; j < loops; ++j)
        natural *= epiColSizes[j];
      int64_t st = a.strides[l + 1];
      inBlock = std::abs(st) == natural;
      (st < 0 ? low : high) += st * (epiColSizes[l] - 1);
    }
    if (!inBlock || low < 0 || high >= epiBlock)
      return refuse() << "the generic reads the product outside the block of "
                      << epiBlock << " columns it writes";
  }
  // An index of the column loops is one value per block (a head's half);
  // one that moves along a block's row or column is not computed here.
  for (auto &[bodyOp, vop] : epiPlan->getBodyPlan().ops) {
    auto expr = dyn_cast<IndexExprOp>(bodyOp);
    if (!expr)
      continue;
    AffineMap map = expr.getMap();
    bool constant = map.getNumResults() == 1 && map.getNumSymbols() == 0 &&
                    isLinear(map.getResult(0));
    if (constant) {
      LinearAccess index = linearCoefficients(map.getResult(0), map.getNumDims());
      constant = index.strides.front() == 0 && index.strides.back() == 0;
    }
    if (!constant)
      return refuse() << "spyre.index_expr in the body varies within a block of columns";
  }
  return success();
}

SmallVector<MatmulPlan::EpiBlock> MatmulPlan::epilogueBlocks(int64_t c0, int64_t c1) const {
  SmallVector<EpiBlock> blocks;
  const int64_t loops = int64_t(epiColSizes.size());
  for (int64_t o = c0 / epiBlock; o < c1 / epiBlock; ++o) {
    // The loops between the outermost and the innermost, as a counter.
    SmallVector<int64_t> values(loops, 0);
    values[0] = o;
    for (;;) {
      int64_t col = o * epiBlock, natural = epiBlock;
      for (int64_t l = 1; l < loops; ++l) {
        natural /= epiColSizes[l];
        col += values[l] * natural;
      }
      blocks.push_back({col, values});
      int64_t l = loops - 2;
      while (l >= 1 && ++values[l] == epiColSizes[l])
        values[l--] = 0;
      if (l < 1)
        break;
    }
  }
  return blocks;
}

int64_t MatmulPlan::epiSpan(const LinearAccess &a, int64_t tn) const {
  int64_t span = 1;
  for (auto [l, size] : llvm::enumerate(epiColSizes))
    span += a.strides[l + 1] * ((l == 0 ? tn / epiBlock : size) - 1);
  return span;
}

LogicalResult MatmulPlan::verifyTile(ArrayRef<int64_t> tile) const {
  if (epilogue && tile.size() != 4)
    return op->emitError() << "spyre.tile of a matmul with an epilogue is [tm, tn, tk, rows "
                              "of an epilogue strip], not "
                           << tile.size() << " sizes";
  if (!epilogue && tile.size() != 3)
    return op->emitError() << "spyre.tile of a matmul is [tm, tn, tk], not " << tile.size()
                           << " sizes";
  int64_t limits[] = {m, n, k, tile[0]};
  for (size_t i = 0; i < tile.size(); ++i)
    if (tile[i] < 1 || tile[i] > limits[i])
      return op->emitError() << "spyre.tile size " << tile[i] << " is not in [1, " << limits[i]
                             << "]";
  if (epiBlock && tile[1] % epiBlock != 0)
    return op->emitError() << "spyre.tile's columns " << tile[1]
                           << " are not whole blocks of the epilogue's " << epiBlock;
  return success();
}

SmallVector<LxSlot> MatmulPlan::slots(ArrayRef<int64_t> tile) const {
  int64_t tm = tile[0], tn = tile[1], tk = tile[2];
  SmallVector<LxSlot> result = {{"lhs", tm * lhsKSpan(tile) * esOf(lhs), lhsWhole(tile) ? 1 : 2},
                                {"rhs", tk * tn * products * esOf(rhs), 2},
                                {"acc", tm * tn * products * (direct(tile) ? esOf(out) : 4), 2}};
  if (staging())
    result.push_back({"staging", tm * tn * esOf(out), 2});
  if (!epilogue)
    return result;
  // The epilogue's loaded inputs, double buffered by output tile like the
  // accumulator, and its temporaries, one strip each, sharing bytes when
  // their live ranges in the body do not overlap.
  for (auto [i, product] : llvm::enumerate(productOf)) {
    if (product >= 0)
      continue;
    const LinearAccess &a = epiPlan->getInputAccess(unsigned(i));
    int64_t es = deviceDTypeBytes(epiPlan->getInputType(unsigned(i)));
    int64_t bytes = epiBlock ? (a.strides[0] ? tm : 1) * epiSpan(a, tn) * es
                             : layoutTile(a.strides[0], a.strides[1], tm, tn, tm, tn, es).bytes;
    result.push_back({"epilogue.input" + std::to_string(i), bytes, 2});
  }
  for (auto [i, temp] : llvm::enumerate(epiPlan->getBodyPlan().temps))
    result.push_back({"epilogue.temp" + std::to_string(i),
                      tile[3] * tn * deviceDTypeBytes(temp.dtype), 1, temp.begin, temp.end});
  return result;
}

double MatmulPlan::epilogueCycles(int64_t rows, int64_t cols, int64_t er) const {
  // Every instruction reads or writes the f32 accumulator or temporaries:
  // counted as two f32 operands in and one out (the most an op streams),
  // and the SFU's startup once per strip.
  double ops = double(epiPlan->getBodyPlan().ops.size());
  double elements = double(rows * cols);
  // An N-D epilogue's instructions run per block.
  int64_t blockCount = epiBlock ? cols / epiColSizes.back() : 1;
  double blocks = double(blockCount);
  double strips = double(epilogueStrips(0, rows, er, blockCount).size());
  return ops * (arch.sfuCycles(elements, 12, false, false) - double(arch.sfuStartupCycles) +
                strips * blocks * double(arch.sfuStartupCycles));
}

bool MatmulPlan::findReadsProductAsItWrites() const {
  const BodyPlan &body = epiPlan->getBodyPlan();
  auto isProduct = [&](Value v) {
    auto it = body.values.find(v);
    return it != body.values.end() && it->second.kind == BodyValue::Kind::input &&
           productOf[it->second.index] >= 0;
  };
  bool writing = false;
  for (auto &[bodyOp, vop] : body.ops) {
    writing = writing || body.values.at(bodyOp->getResult(0)).kind == BodyValue::Kind::output;
    if (writing && llvm::any_of(bodyOp->getOperands(), isProduct))
      return true;
  }
  // No op writes the output: a copy of the yielded value does, last.
  Value yielded = cast<YieldOp>(epilogue.getBody().front().getTerminator()).getValues()[0];
  return !writing && isProduct(yielded);
}

SmallVector<std::pair<int64_t, int64_t>>
MatmulPlan::epilogueStrips(int64_t r0, int64_t r1, int64_t er, int64_t blocks) const {
  bool narrowedInPlace = blocks > 1 && esOf(out) < 4 && readsProductAsItWrites;
  SmallVector<std::pair<int64_t, int64_t>> strips;
  for (int64_t s0 = r0; s0 < r1;) {
    int64_t rows = std::min(er, r1 - s0);
    if (narrowedInPlace)
      rows = std::min(rows, std::max<int64_t>(s0, 1));
    strips.push_back({s0, s0 + rows});
    s0 += rows;
  }
  return strips;
}

bool MatmulPlan::walksRows(ArrayRef<int64_t> tile, Grid grid) const {
  if (tile[2] < k)
    return false;
  double mc = double(llvm::divideCeil(llvm::divideCeil(m, tile[0]), grid.m)),
         nc = double(columnSplit(tile[1]).busiest(grid.n).first);
  double rhsRow = double(n * products * esOf(rhs));
  double lhsStays = double(m) * esOf(lhs) + rhsRow * mc,
         rhsStays = double(m) * esOf(lhs) * nc + rhsRow;
  return rhsStays < lhsStays;
}

double MatmulPlan::estimate(ArrayRef<int64_t> tile, Grid grid) const {
  // The busiest core's share: its tiles along each grid dimension, and one
  // width standing for all of its column tiles. When K takes several steps
  // the PT paces the run and the mean width prices the columns the core
  // really has: at the widest, 12800 columns on 13 to 16 grid columns all
  // looked like four 4-stick tiles, so the fewest cores won (16 sticks on
  // the busiest core where 16 grid columns give 13: 1132.8 -> 1024.0 us).
  // With all of K in one step, or with an epilogue, the widest stays: their
  // time is set by transfers and SFU work that the estimate prices less
  // well, and at the mean they chose slower tiles (2048 x 512 x 6400 +27%,
  // the Llama MLP's up projection with its SiLU +7%).
  int64_t tm = tile[0], tk = tile[2];
  int64_t mt = llvm::divideCeil(m, tm), kt = llvm::divideCeil(k, tk);
  auto [columnTiles, tn] = columnSplit(tile[1]).busiest(grid.n, kt > 1 && !epilogue);
  double bc = double(llvm::divideCeil(batch, grid.b)), mc = double(llvm::divideCeil(mt, grid.m)),
         nc = double(columnTiles);
  double tiles = bc * mc * nc, steps = tiles * double(kt);
  // A step's operands and PT work at the mean depth of a K step: a ragged
  // last step (K 5632 in steps of 1024) is not priced as a whole one.
  double depth = double(k) / double(kt);
  double lhsBytes = double(tm) * depth * esOf(lhs),
         rhsBytes = depth * double(tn * products * esOf(rhs)),
         outBytes = double(tm * tn * outputs() * esOf(out));
  double cores = double(grid.b * grid.m * grid.n);
  double bw = arch.deviceBytesPerCycle(), port = double(arch.dmaPortBytesPerCycle),
         latency = double(arch.dmaLatencyCycles);
  // Device bus: an lhs row is read once for each output tile of a core's
  // row of tiles (shared by the grid row), an rhs column once for each of a
  // core's column of tiles (shared by the grid column). The cores run in
  // lock step, so every transfer's latency leaves the bus idle.
  // With all of K in one step the panel the walk keeps is read once per
  // core's block, not once per output tile.
  // Tiles that walk K in pairs read their shared panel once for both.
  double lhsF = nc, rhsF = mc;
  if (kt == 1 && walksRows(tile, grid))
    rhsF = 1;
  else if (kt == 1)
    lhsF = 1;
  else if (tiles >= 2 && nc >= 2)
    lhsF = std::ceil(nc / 2);
  else if (tiles >= 2)
    rhsF = std::ceil(mc / 2);
  double lhsLoads = bc * mc * lhsF * double(kt), rhsLoads = bc * nc * rhsF * double(kt);
  // A whole-K lhs panel: one load per core, before the first step.
  bool whole = lhsWhole(tile);
  if (whole) {
    lhsF = 1;
    lhsLoads = 1;
  }
  // Cores of a grid row whose column blocks differ in width run epilogues
  // of different lengths, and a step ends when its epilogue does: their
  // steps drift apart and their loads of the shared lhs panel stop
  // coinciding, so the card reads it again for some of them. Counted as one
  // more read (a gated 512 x 2048 x 5632 on 15 grid columns of 5 and 6
  // sticks moved 3.8 MB more than its two reads of x, 2 MB each; without an
  // epilogue the 5632 columns of the product alone on 16 did not drift).
  double paces = epilogue && !whole && columnSplit(tile[1]).units % grid.n != 0 ? 2 : 1;
  // Likewise down a grid column: the core whose last row tile is short
  // runs ahead of the others during that tile and reads its rhs panels
  // itself, one core's tile in each of its `mc` (200 x 2048 x 2048 in tiles
  // of 104 rows on 2 grid rows, one tile each: estimated 86 us, ran 138;
  // in one row of 200, 88 us).
  double rowShare = grid.m > 1 && m % tm != 0 ? 1 + double(grid.m - 1) / mc : 1;
  // An epilogue of more SFU instructions (its ops times its strips) than an
  // engine's queue holds stops the core from issuing its next loads and
  // products until the SFU has run the excess: instructions issue in order.
  double epiInstructions =
      epilogue ? double(epiPlan->getBodyPlan().ops.size()) * double(llvm::divideCeil(tm, tile[3])) *
                     (epiBlock ? double(tn / epiColSizes.back()) : 1)
               : 0;
  double epiExcess = std::max(0.0, epiInstructions - double(arch.engineQueueDepth));
  double read = double(batch) * double(k) *
                (double(m) * esOf(lhs) * lhsF * paces +
                 double(n * products) * esOf(rhs) * rhsF * rowShare);
  double written = double(batch * m * n * outputs() * esOf(out));
  if (accumulate)
    read += written;
  // The epilogue's inputs are loaded once per output tile.
  double epiBytes = 0, epiLoads = 0;
  if (epilogue)
    for (auto [i, product] : llvm::enumerate(productOf))
      if (product < 0) {
        const LinearAccess &a = epiPlan->getInputAccess(unsigned(i));
        int64_t ies = deviceDTypeBytes(epiPlan->getInputType(unsigned(i)));
        epiBytes += epiBlock ? double((a.strides[0] ? tm : 1) * epiSpan(a, tn) * ies)
                             : double(layoutTile(a.strides[0], a.strides[1], tm, tn, tm, tn, ies)
                                          .bytes);
        epiLoads += 1;
      }
  read += double(batch * mt) * double(llvm::divideCeil(n, tn)) * epiBytes;
  // Side-by-side products load each rhs panel in one transfer per product.
  double transfers =
      lhsLoads + rhsLoads * products + tiles * ((accumulate ? 2 : 1) * outputs() + epiLoads);
  double bus = arch.deviceCycles(read, written) + transfers * latency;
  // Each core's own transfers also pass its DMA engine.
  double lhsPanel = double(tm * lhsKSpan(tile) * esOf(lhs)); // lhsBytes unless whole
  double own = (lhsLoads * lhsPanel + rhsLoads * rhsBytes +
                tiles * (outBytes * (accumulate ? 2 : 1) + epiBytes)) /
               port;
  // One step on the PT (peak rate or operand feed, plus fill and drain: the
  // card description's formula), the conversion of a finished tile on the
  // SFU (from the f32 accumulator), the first step's loads (each grid row
  // reads its lhs tile, then each column its rhs tile) and the last tiles'
  // stores, all cores at once.
  double accBytes = direct(tile) ? outBytes
                                 : double(tm * tn * products * 4 * (kt > 1 || accumulate ? 2 : 1));
  double pt =
      arch.ptCycles(double(tm), depth, double(tn * products), lhsBytes + rhsBytes, accBytes);
  // Staged output: the f32 accumulator (4 bytes) converted to 16 bits (2).
  double convert = staged() && !direct(tile)
                       ? arch.sfuCycles(double(tm * tn * outputs()), 6, false, false)
                       : 0;
  if (epilogue)
    convert = epilogueCycles(tm, tn, tile[3]);
  double firstLoad = std::max(double(grid.b * grid.m) * lhsPanel / bw, lhsPanel / port) +
                     std::max(double(grid.b * grid.n) * rowShare * rhsBytes / bw,
                              rhsBytes / port) +
                     double(1 + products) * latency;
  // The last stores find no reads to share the bus with: when fewer bytes
  // are written than read they pay the read/write turnaround alone.
  double storeCost = 1 / bw + (written < read ? arch.turnaroundCyclesPerByte() : 0);
  auto lastStore = [&](double bytes) {
    return std::max(cores * bytes * storeCost, bytes / port) + latency;
  };
  // The steady state: the loads of step t + 2 wait for the compute of step
  // t, so a step takes the longer of its PT time and its loads (all cores'
  // loads share the bus); in a pair only the first tile's steps load the
  // shared panel, and that load starts after the first tile's previous
  // step, so two steps take at least that load and one PT step. The
  // stores in mid run take the DMA engine from the loads.
  double readCost = 1 / bw + (read < written ? arch.turnaroundCyclesPerByte() : 0);
  double lhsStep = std::max(double(grid.b * grid.m) * paces * lhsBytes * readCost,
                            lhsBytes / port) +
                   latency,
         rhsStep = std::max(double(grid.b * grid.n) * rowShare * rhsBytes * readCost,
                            rhsBytes / port) +
                   double(products) * latency;
  if (whole) { // loaded with the fill, not per step
    lhsStep = 0;
    lhsLoads = 0;
  }
  double both = lhsStep + rhsStep, steady;
  if (kt == 1) {
    steady = steps * std::max(pt, (lhsLoads * lhsStep + rhsLoads * rhsStep) / steps);
  } else if (tiles >= 2) {
    double alone = nc >= 2 ? rhsStep : lhsStep, pairs = std::floor(tiles / 2);
    steady = pairs * double(kt) * std::max({2 * pt, both + alone, both + pt}) +
             (tiles - 2 * pairs) * double(kt) * std::max(pt, both);
  } else {
    steady = steps * std::max(pt, both);
  }
  // After the fill (the first step's loads, counted apart) every step but
  // the last overlaps its PT work with the next step's loads; the last one
  // only computes (the drain).
  steady = steady * double(steps - 1) / steps + pt;
  double midStores = (tiles - 1) * (cores * outBytes * storeCost + latency);
  steady = std::max(steady, lhsLoads * lhsStep + rhsLoads * rhsStep - both + midStores + pt);
  // The epilogue of a tile runs on the SFU while the PT computes the next
  // ones: it paces the run when it takes longer than a tile's steps.
  if (epilogue)
    steady = std::max(steady, tiles * convert);
  // The issue held up by a long epilogue (above), once per tile.
  if (epiExcess > 0)
    steady += tiles * convert * epiExcess / epiInstructions;
  // Whichever of the PT and the transfers is busiest sets the pace; the
  // transfers wait for the first tile to be computed before storing.
  // The core's last step runs as two row halves (lower): when the PT is
  // done only the second half's conversion and store are left. Charged
  // whole, the tail made larger tiles look slower than they run (linear +
  // bias + GELU 512 x 4096 x 4096 took 128 x 128 x 1024 tiles that read the
  // lhs twice: 396.9 us, against 393.4 with the 128 x 256 x 512 it takes now).
  double tail = !accumulate && tm >= 2 ? convert / 2 + lastStore(outBytes / 2)
                                        : convert + lastStore(outBytes);
  double compute = firstLoad + steady + tail;
  double transfer = std::max(bus, own) + pt + convert;
  return std::max(compute, transfer);
}

std::array<int64_t, 3> MatmulPlan::position(Grid grid, int64_t core, bool columnsTogether) const {
  int64_t cb = core / (grid.m * grid.n), at = core % (grid.m * grid.n);
  return columnsTogether ? std::array<int64_t, 3>{cb, at % grid.m, at / grid.m}
                         : std::array<int64_t, 3>{cb, at / grid.n, at % grid.n};
}

int64_t MatmulPlan::coresPerPort(Grid grid, int64_t cores) const {
  return llvm::divideCeil(grid.b * grid.m * grid.n, arch.memoryPorts(cores));
}

int64_t MatmulPlan::physicalCore(Grid grid, int64_t cores, int64_t core) const {
  int64_t perPort = coresPerPort(grid, cores);
  return core / perPort * arch.portCores + core % perPort;
}

bool MatmulPlan::numbersDownColumns(Grid grid, int64_t cores) const {
  int64_t used = grid.b * grid.m * grid.n, perPort = coresPerPort(grid, cores);
  double lhsBytes = double(batch * m * k * esOf(lhs)),
         rhsBytes = double(batch * n * products * k * esOf(rhs));
  auto busiest = [&](bool columnsTogether) {
    double most = 0;
    for (int64_t first = 0; first < used; first += perPort) {
      llvm::DenseSet<std::pair<int64_t, int64_t>> lhsPanels, rhsPanels;
      for (int64_t core = first; core < std::min(first + perPort, used); ++core) {
        auto [cb, ci, cj] = position(grid, core, columnsTogether);
        lhsPanels.insert({cb, ci});
        rhsPanels.insert({cb, cj});
      }
      most = std::max(most, lhsBytes * double(lhsPanels.size()) / double(grid.b * grid.m) +
                                rhsBytes * double(rhsPanels.size()) / double(grid.b * grid.n));
    }
    return most;
  };
  return busiest(true) < busiest(false);
}

bool MatmulPlan::splitsColumns(ArrayRef<int64_t> tile, int64_t ak, int64_t cols,
                               Grid grid) const {
  // One transfer per product, each paying the latency.
  double latency = double(arch.dmaLatencyCycles) * double(products);
  double rhsBytes = double(ak * cols * products * esOf(rhs)),
         cores = double(grid.b * grid.m * grid.n);
  double load = std::max(cores * rhsBytes / arch.deviceBytesPerCycle(),
                         rhsBytes / double(arch.dmaPortBytesPerCycle)) +
                latency;
  bool kSteps = llvm::divideCeil(k, tile[2]) > 1;
  double accBytes =
      double(cols * products) * (direct(tile) ? double(esOf(out)) : (kSteps ? 8.0 : 4.0));
  double pt = arch.ptCycles(1, double(ak), double(cols * products),
                            double(ak * esOf(lhs)) + rhsBytes, accBytes);
  // The last step's load starts as the step before it starts its product
  // (that step's load is done); the second half's load waits for that
  // product too (the loads of step t wait for the compute of step t - 2).
  double halfLoad = (load - latency) / 2 + latency;
  double firstHalf = std::max(halfLoad, pt);
  double split = std::max(firstHalf + pt / 2, firstHalf + halfLoad) + pt / 2;
  return split < std::max(load, pt) + pt;
}

bool MatmulPlan::withinSpan(ArrayRef<int64_t> tile, Grid grid) const {
  // The busiest core's batches, output rows and columns.
  int64_t batches = llvm::divideCeil(batch, grid.b);
  int64_t rows = std::min<int64_t>(m, llvm::divideCeil(llvm::divideCeil(m, tile[0]), grid.m) * tile[0]);
  ColumnSplit split = columnSplit(tile[1]);
  int64_t cols = std::min<int64_t>(n, llvm::divideCeil(split.units, grid.n) * split.unit);
  auto reach = [&](const Operand &o, int64_t outer, int64_t inner) {
    int64_t elements = (batches - 1) * std::abs(o.batchStride) +
                       (outer - 1) * std::abs(o.outerStride) +
                       (inner - 1) * std::abs(o.innerStride) + 1;
    return !o.value || elements * esOf(o) <= arch.perCoreSpanBytes;
  };
  return reach(lhs, rows, k) && reach(rhs, k, cols) && reach(rhs2, k, cols) &&
         reach(out, rows, cols) && reach(out2, rows, cols);
}

MatmulPlan::Grid MatmulPlan::chooseGrid(int64_t cores, ArrayRef<int64_t> tile,
                                        double &time) const {
  int64_t mt = llvm::divideCeil(m, tile[0]), units = columnSplit(tile[1]).units;
  // The fastest grid whose cores each address at most the card's span of
  // every operand; the fastest of all if none does (the lowering then says
  // why it refuses).
  Grid best;
  time = estimate(tile, best);
  bool bestWithin = withinSpan(tile, best);
  for (int64_t gb = 1; gb <= std::min(batch, cores); ++gb)
    for (int64_t gm = 1; gm <= std::min(mt, cores / gb); ++gm)
      for (int64_t gn = 1; gn <= std::min(units, cores / (gb * gm)); ++gn) {
        Grid grid = {gb, gm, gn};
        bool within = withinSpan(tile, grid);
        if (bestWithin && !within)
          continue;
        double t = estimate(tile, grid);
        if (t < time || (within && !bestWithin)) {
          best = grid;
          time = t;
          bestWithin = within;
        }
      }
  return best;
}

SmallVector<std::pair<double, SmallVector<int64_t>>>
MatmulPlan::rankTiles(int64_t cores, int64_t lxBytes, bool threeSticks) const {
  // Larger output tiles read the operands fewer times but leave cores idle
  // when there are too few of them, and the PT is fed better by some shapes
  // than others: the estimate weighs it all.
  int64_t stick = arch.stickBytes / 2;
  auto sizes = [&](int64_t dim, int64_t limit) {
    SmallVector<int64_t> result;
    if (dim <= stick)
      return SmallVector<int64_t>{dim};
    for (int64_t t = stick; t <= std::min(dim, limit); t *= 2) {
      result.push_back(t);
      if (threeSticks && 3 * t <= std::min(dim, limit))
        result.push_back(3 * t);
    }
    if (dim <= limit && !llvm::is_contained(result, dim))
      result.push_back(dim);
    return result;
  };
  // Rows are not cut by sticks (unless the lhs is stored transposed): where
  // a size leaves a short last row tile, tiles that divide the rows
  // exactly (the fewest of them, up to twice as many) and the same count of
  // near-equal tiles are candidates too. 800 rows in 256-row tiles left a
  // last tile of 32 whose cores ran ahead and lost the rhs broadcast:
  // 2048 x 2048 took longer at 800 rows (216.2 us) than at 1024 (192.0).
  SmallVector<int64_t> rowSizes = sizes(m, 16 * stick);
  if (!lhs.transposed)
    for (int64_t t : SmallVector<int64_t>(rowSizes)) {
      int64_t count = llvm::divideCeil(m, t);
      SmallVector<int64_t> more = {llvm::divideCeil(m, count)};
      for (int64_t c = count; c <= 2 * count; ++c)
        if (m % c == 0) {
          more.push_back(m / c);
          break;
        }
      for (int64_t size : more)
        if (size < t && !llvm::is_contained(rowSizes, size))
          rowSizes.push_back(size);
    }
  SmallVector<std::pair<double, SmallVector<int64_t>>> ranked;
  for (int64_t tm : rowSizes)
    for (int64_t tn : sizes(n, 16 * stick))
      for (int64_t tk : sizes(k, 16 * stick)) {
        SmallVector<int64_t> tile = fitting(tm, tn, tk, lxBytes);
        if (tile.empty())
          continue;
        double time;
        chooseGrid(cores, tile, time);
        ranked.push_back({time, std::move(tile)});
      }
  // Stable: among equal estimates, the first enumerated (smaller) tile.
  llvm::stable_sort(ranked, [](const auto &a, const auto &b) { return a.first < b.first; });
  return ranked;
}

SmallVector<int64_t> MatmulPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  auto ranked = rankTiles(cores, lxBytes, /*threeSticks=*/false);
  if (!ranked.empty())
    return ranked.front().second;
  // Nothing stick sized fits (huge element types or a tiny LX): shrink.
  for (int64_t t = std::min({m, n, k}); t >= 1; t /= 2)
    if (SmallVector<int64_t> tile = fitting(t, t, t, lxBytes); !tile.empty())
      return tile;
  return {};
}

SmallVector<int64_t> MatmulPlan::fitting(int64_t tm, int64_t tn, int64_t tk,
                                         int64_t lxBytes) const {
  SmallVector<int64_t> tile = {tm, tn, tk};
  if (epiBlock && tn % epiBlock != 0)
    return {};
  if (epilogue)
    tile.push_back(tm);
  for (;;) {
    int64_t total;
    assignLx(slots(tile), arch.stickBytes, total);
    if (total <= lxBytes)
      return tile;
    if (!epilogue || tile[3] == 1)
      return {};
    tile[3] /= 2;
  }
}

SmallVector<SmallVector<int64_t>> MatmulPlan::tileCandidates(int64_t cores, int64_t lxBytes,
                                                            int64_t count) const {
  SmallVector<SmallVector<int64_t>> result;
  if (SmallVector<int64_t> chosen = chooseTile(cores, lxBytes); !chosen.empty())
    result.push_back(chosen);
  for (auto &[time, tile] : rankTiles(cores, lxBytes, /*threeSticks=*/true)) {
    if (int64_t(result.size()) >= count)
      break;
    if (!llvm::is_contained(result, tile))
      result.push_back(tile);
  }
  return result;
}

LogicalResult MatmulPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                                ArrayRef<int64_t> lx) const {
  SmallVector<LxSlot> slotList = slots(tile);
  auto slotAt = [&](unsigned slot, int64_t copy) { return lx[slot] + copy * slotList[slot].bytes; };
  int64_t tm = tile[0], tn = tile[1], tk = tile[2];
  int64_t mt = llvm::divideCeil(m, tm), kt = llvm::divideCeil(k, tk);
  ColumnSplit split = columnSplit(tn);
  double time;
  Grid grid = chooseGrid(cores, tile, time);
  bool rows = walksRows(tile, grid);
  bool inOne = direct(tile);
  bool whole = lhsWhole(tile);
  int64_t kSpan = lhsKSpan(tile);
  uint8_t accType = inOne ? out.dtype : uint8_t(ISA::DType::f32);
  int64_t accBytes = inOne ? esOf(out) : 4;
  Location loc = op->getLoc();
  // The epilogue's slots follow lhs, rhs and acc: its loaded inputs, then
  // its temporaries.
  SmallVector<int64_t> epiSlot, tempAt;
  if (epilogue) {
    unsigned next = 3;
    for (int64_t product : productOf)
      epiSlot.push_back(product >= 0 ? -1 : int64_t(next++));
    for (size_t i = 0; i < epiPlan->getBodyPlan().temps.size(); ++i)
      tempAt.push_back(slotAt(next++, 0));
  }

  // A tile of `o` covering rows [r0, r0 + rows) of its outer dimension and
  // [c0, c0 + cols) of its inner one, in LX with a row pitch of `pitch`
  // elements of its stored rows.
  struct Placed {
    Transfer load;
    RefAttr view;
  };
  auto place = [&](const Operand &o, int64_t b, int64_t r0, int64_t c0, int64_t rows,
                   int64_t cols, int64_t outerTile, int64_t innerTile, int64_t at) {
    int64_t es = esOf(o);
    int64_t offset = (b * o.batchStride + r0 * o.outerStride + c0 * o.innerStride) * es;
    // Stored rows run along the contiguous dimension.
    int64_t storedRows = o.transposed ? cols : rows, storedCols = o.transposed ? rows : cols;
    int64_t rowStride = o.transposed ? o.innerStride : o.outerStride;
    int64_t pitch = (o.transposed ? outerTile : innerTile) * es;
    Placed p;
    p.load = {em.lx(o.dtype, at, {pitch, 0, 0}),
              em.device(o.value, o.dtype, offset, {rowStride * es, 0, 0}), storedCols * es,
              {storedRows, 1, 1}};
    p.view = em.lx(o.dtype, at, {pitch, 0, 0});
    return p;
  };

  // Core (cb, ci, cj) of the grid takes a block of batches, of row tiles
  // and of column tiles, and walks them in the same order as every other
  // core, so that cores of a grid row load the same lhs panel, and cores of
  // a grid column the same rhs panel, at the same step. A memory port
  // carries each panel its cores load, so the cores are numbered down the
  // grid's columns or along its rows, whichever leaves the busier port
  // fewer bytes to carry, and a grid on fewer cores than the program has
  // runs as many of them behind each port (a 1 x 2048 x 256 product on 4
  // cores: 15.2 us on cores 0-3, 12.2 on 0, 1, 16 and 17).
  bool columnsTogether = numbersDownColumns(grid, cores);
  for (int64_t core = 0; core < grid.b * grid.m * grid.n; ++core) {
    auto [cb, ci, cj] = position(grid, core, columnsTogether);
    int64_t bBegin = batch * cb / grid.b, bc = batch * (cb + 1) / grid.b - bBegin;
    int64_t mBegin = mt * ci / grid.m, mc = mt * (ci + 1) / grid.m - mBegin;
    std::pair<int64_t, int64_t> columnBlock = split.block(grid.n, cj);
    int64_t nc = split.tiles(columnBlock);
    auto tileAt = [&, bBegin, mc, nc](int64_t local) -> std::array<int64_t, 3> {
      return {bBegin + local / (mc * nc), rows ? local % mc : local / nc % mc,
              rows ? local / mc % nc : local % nc};
    };
    // The order of (tile, K step) and, for each step, the copy of each
    // operand slot and whether it is loaded.
    struct Order {
      int64_t local, s, lhsCopy, rhsCopy;
      bool lhsNew, rhsNew;
      /// The tile whose store's second half this step issues (-1: none).
      int64_t deferred = -1;
      /// The output rows of the tile this step computes ([0, rowEnd) when
      /// rowEnd < 0: all), and its columns likewise.
      int64_t rowBegin = 0, rowEnd = -1, colBegin = 0, colEnd = -1;
    };
    std::vector<Order> order;
    SlotCopies lhsCopies, rhsCopies;
    auto add = [&](int64_t local, int64_t s) {
      auto [b, mi, ni] = tileAt(local);
      int64_t t = int64_t(order.size());
      auto [lc, ln] = whole ? std::pair<int64_t, bool>{0, t == 0} : lhsCopies.use({b, mi, s}, t);
      auto [rc, rn] = rhsCopies.use({b, ni, s}, t);
      order.push_back({local, s, lc, rc, ln, rn});
    };
    int64_t count = bc * mc * nc;
    for (int64_t local = 0; local < count;) {
      auto a = tileAt(local);
      std::array<int64_t, 3> b = local + 1 < count ? tileAt(local + 1) : a;
      bool pair = kt > 1 && local + 1 < count && a[0] == b[0] && (a[1] == b[1] || a[2] == b[2]);
      if (!pair) {
        for (int64_t s = 0; s < kt; ++s)
          add(local, s);
        local += 1;
        continue;
      }
      for (int64_t s = 0; s + 2 < kt; ++s) {
        add(local, s);
        add(local + 1, s);
      }
      for (int64_t which : {0, 1})
        for (int64_t s = kt - 2; s < kt; ++s)
          add(local + which, s);
      local += 2;
    }
    // A store ahead of the next steps' loads in the in-order DMA queue
    // holds them up while the PT runs dry; the second half of a tile's
    // store waits one step more, after those loads, when the acc copy it
    // reads is not written again before then (its next tile starts at
    // least three steps later; with all of K in one step the next store
    // follows at once anyway).
    std::vector<int64_t> firstStep(count, -1);
    for (auto [t, o] : llvm::enumerate(order))
      if (firstStep[o.local] < 0)
        firstStep[o.local] = int64_t(t);
    for (int64_t t = 0; t + 1 < int64_t(order.size()); ++t) {
      int64_t local = order[t].local;
      int64_t rows = std::min(tm, m - (mBegin + tileAt(local)[1]) * tm);
      if (kt > 1 && order[t].s == kt - 1 && rows >= 2 &&
          (local + 2 >= count || firstStep[local + 2] >= t + 3))
        order[t + 1].deferred = local;
    }
    // The core's last step runs as two row halves, so that the first
    // half's conversion and store overlap the second half's product: only
    // the second half's store is left when the PT is done. A tile of one
    // row (a decode step's GEMV) runs it as two column halves instead, each
    // loading its half of the rhs panel: the first half's product overlaps
    // the second half's load, and only half the panel's product is left
    // when the last load is done (1 x 2048 x 5632: 163.2 -> 161.6 us).
    if (!order.empty() && !accumulate) {
      Order lastStep = order.back();
      std::array<int64_t, 3> lastTile = tileAt(lastStep.local);
      int64_t rows = std::min(tm, m - (mBegin + lastTile[1]) * tm);
      int64_t cols = split.columns(columnBlock, lastTile[2]).second;
      // Halves of whole sticks of a row-major rhs panel; a transposed one
      // (nn.Linear's weight) is stored by columns, any of which may start.
      int64_t unit = rhs.transposed ? 1 : split.unit;
      int64_t half = cols / (2 * unit) * unit;
      if (rows >= 2) {
        order.back().rowEnd = rows / 2;
        lastStep.rowBegin = rows / 2;
        lastStep.rowEnd = rows;
        lastStep.lhsNew = lastStep.rhsNew = false;
        lastStep.deferred = -1;
        order.push_back(lastStep);
      } else if (lastStep.rhsNew && half > 0 && !epiBlock &&
                 splitsColumns(tile, std::min(tk, k - lastStep.s * tk), cols, grid)) {
        order.back().colEnd = half;
        lastStep.colBegin = half;
        lastStep.colEnd = cols;
        lastStep.lhsNew = false;
        lastStep.deferred = -1;
        order.push_back(lastStep);
      }
    }
    int64_t numSteps = int64_t(order.size());
    // Whether step `o` stores its tile (its last K step, the part that
    // ends its columns).
    auto storesItsTile = [&, columnBlock](const Order &o) {
      return o.s == kt - 1 &&
             (o.colEnd < 0 || o.colEnd == split.columns(columnBlock, tileAt(o.local)[2]).second);
    };
    auto stepAt = [&, mBegin, columnBlock, order = std::move(order)](int64_t i) {
      const Order &o = order[i];
      int64_t local = o.local, s = o.s;
      auto [b, mi, ni] = tileAt(local);
      auto [n0, an] = split.columns(columnBlock, ni);
      int64_t m0 = (mBegin + mi) * tm, k0 = s * tk;
      int64_t am = std::min(tm, m - m0), ak = std::min(tk, k - k0);
      int64_t r0 = o.rowBegin, r1 = o.rowEnd < 0 ? am : o.rowEnd;
      int64_t c0 = o.colBegin, c1 = o.colEnd < 0 ? an : o.colEnd;
      auto shift = [&](RefAttr r, int64_t bytes) {
        ArrayRef<int64_t> st = r.getStrides();
        return em.lx(r.getDtype(), r.getOffset() + bytes, {st[0], st[1], st[2]});
      };
      bool first = s == 0, last = s == kt - 1;
      int64_t outCopy = local % 2;
      // A whole-K lhs panel is loaded once; each step views its K columns.
      Placed a = whole ? place(lhs, b, m0, 0, am, k, tm, kSpan, slotAt(0, 0))
                       : place(lhs, b, m0, k0, am, ak, tm, tk, slotAt(0, o.lhsCopy));
      if (whole)
        a.view = em.lx(lhs.dtype, a.view.getOffset() + k0 * (lhs.transposed ? tm : 1) * esOf(lhs),
                       {a.view.getStrides()[0], 0, 0});
      // Columns [c0, c1) of the rhs panel, in their place in its slot; a
      // second product's columns follow all of the first's, so that one
      // instruction computes both where a step takes all the columns.
      int64_t rhsColBytes = (rhs.transposed ? tk : 1) * esOf(rhs);
      Placed w = place(rhs, b, k0, n0 + c0, ak, c1 - c0, tk, tn * products,
                       slotAt(1, o.rhsCopy) + c0 * rhsColBytes);
      Placed w2 = w;
      if (products == 2)
        w2 = place(rhs2, b, k0, n0 + c0, ak, c1 - c0, tk, tn * products,
                   slotAt(1, o.rhsCopy) + (an + c0) * rhsColBytes);
      bool allColumns = c0 == 0 && c1 == an;
      RefAttr acc = em.lx(accType, slotAt(2, outCopy), {tn * products * accBytes, 0, 0});
      int64_t es = esOf(out);
      // The converted tile: in the acc slot unless accumulating needs staging.
      RefAttr stage = inOne || !staged()
                          ? acc
                          : em.lx(out.dtype, slotAt(staging() ? 3 : 2, outCopy), {tn * es, 0, 0});
      RefAttr device = em.device(out.value, out.dtype,
                                 (out.base + b * out.batchStride + m0 * out.outerStride + n0) * es,
                                 {out.outerStride * es, 0, 0});
      TileStep step;
      // Results live in their tile's copy of the accumulator (and staging)
      // slot: the stores of step i - 2 read another copy unless one of the
      // tiles they store has this tile's parity.
      if (i >= 2) {
        const Order &before = order[i - 2];
        step.mayOverwriteStored = (storesItsTile(before) && before.local % 2 == outCopy) ||
                                  (before.deferred >= 0 && before.deferred % 2 == outCopy);
      }
      if (o.lhsNew)
        step.loads.push_back(a.load);
      if (o.rhsNew)
        step.loads.push_back(w.load);
      if (o.rhsNew && products == 2)
        step.loads.push_back(w2.load);
      step.operandLoads = step.loads.size();
      bool loadInit = accumulate && first;
      if (loadInit) // the output's current content starts the sum
        step.loads.push_back({stage, device, an * es, {am, 1, 1}});
      // The epilogue's inputs of this output tile, loaded with its last K
      // step (its first half when that step is split), into the copy of the
      // tile's parity like the accumulator.
      SmallVector<RefAttr> epiViews;
      RefAttr lateView; // an epilogue input this step loads, if any
      if (epilogue)
        for (auto [e, slot] : llvm::enumerate(epiSlot)) {
          if (slot < 0) {
            epiViews.push_back({});
            continue;
          }
          const LinearAccess &access = epiPlan->getInputAccess(unsigned(e));
          uint8_t dtype = epiPlan->getInputType(unsigned(e));
          int64_t ies = deviceDTypeBytes(dtype);
          int64_t at = slotAt(unsigned(slot), outCopy);
          if (epiBlock) {
            // The elements the tile's rows touch, a run per row at a pitch
            // of the widest tile's run.
            int64_t pitch = epiSpan(access, tn) * ies, rowStride = access.strides[0];
            if (last && o.rowBegin == 0 && o.colBegin == 0) {
              step.loads.push_back(
                  {em.lx(dtype, at, {pitch, 0, 0}),
                   em.device(epilogue.getInputs()[e], dtype,
                             (access.base + m0 * rowStride + n0 / epiBlock * access.strides[1]) *
                                 ies,
                             {rowStride * ies, 0, 0}),
                   epiSpan(access, an) * ies, {rowStride ? am : 1, 1, 1}});
              lateView = em.lx(dtype, at, {ies, ies, 0});
            }
            epiViews.push_back(
                em.lx(dtype, at, {rowStride ? pitch : 0, access.strides.back() * ies, 0}));
            continue;
          }
          TileLayout l =
              layoutTile(access.strides[0], access.strides[1], tm, tn, am, an, ies);
          if (last && o.rowBegin == 0 && o.colBegin == 0) {
            step.loads.push_back(
                {em.lx(dtype, at, l.lxStrides),
                 em.device(epilogue.getInputs()[e], dtype,
                           (access.base + m0 * access.strides[0] + n0 * access.strides[1]) * ies,
                           l.deviceStrides),
                 l.rowBytes, l.counts});
            lateView = em.lx(dtype, at, {ies, ies, 0});
          }
          epiViews.push_back(em.lx(dtype, at, {l.rowStride, l.colStride, 0}));
        }
      // Rows [r0, r1) of tile `tile`'s stores: of each product's output,
      // whose converted rows lie side by side like the accumulator's.
      int64_t storedPitch = tn * outputs();
      auto storeRows = [&](int64_t tile, int64_t r0, int64_t r1) {
        auto [tb, tmi, tni] = tileAt(tile);
        auto [tn0, cols] = split.columns(columnBlock, tni);
        int64_t tm0 = (mBegin + tmi) * tm;
        int64_t at = slotAt(staging() ? 3 : 2, tile % 2) + r0 * storedPitch * es;
        for (int64_t p = 0; p < outputs(); ++p) {
          const Operand &o = p == 0 ? out : out2;
          step.stores.push_back(
              {em.device(o.value, o.dtype,
                         (o.base + tb * o.batchStride + (tm0 + r0) * o.outerStride + tn0) * es,
                         {o.outerStride * es, 0, 0}),
               em.lx(o.dtype, at + p * cols * es, {storedPitch * es, 0, 0}), cols * es,
               {r1 - r0, 1, 1}});
        }
      };
      bool split = last && i + 1 < int64_t(order.size()) && order[i + 1].deferred == local;
      if (storesItsTile(o)) {
        if (split)
          storeRows(local, 0, am / 2);
        else
          storeRows(local, r0, r1);
      }
      if (o.deferred >= 0) {
        auto [db, dmi, dni] = tileAt(o.deferred);
        int64_t rows = std::min(tm, m - (mBegin + dmi) * tm);
        storeRows(o.deferred, rows / 2, rows);
      }
      // Rows [r0, r1) of the output are rows [r0, r1) of the lhs tile (its
      // columns when LX holds it transposed) and of the accumulator.
      RefAttr lhsView = shift(a.view, r0 * (lhs.transposed ? 1 : kSpan) * esOf(lhs));
      RefAttr accRows = shift(acc, (r0 * tn * products + c0) * accBytes);
      int64_t rowCount = r1 - r0, colCount = c1 - c0;
      step.compute = [=, this, &em](StepCompute &sc) {
        OpBuilder &builder = sc.b();
        auto sfuView = [&](RefAttr r, int64_t e) {
          return em.lx(r.getDtype(), r.getOffset(), {tn * e, e, 0});
        };
        if (loadInit && staged())
          sc.add(HwUnaryOp::create(builder, loc, "copy", sfuView(acc, 4), sfuView(stage, es), am,
                                   an, nullptr, 0, nullptr, nullptr));
        // Both products in one instruction, or, for a step that takes some
        // of the columns (a one-row tile's last step in column halves),
        // one instruction each.
        auto product = [&](RefAttr dst, RefAttr rhsView, int64_t cols) {
          return sc.add(HwMatmulOp::create(builder, loc, dst, lhsView, rhsView, rowCount, ak, cols,
                                           lhs.transposed, rhs.transposed, !first || accumulate,
                                           nullptr, 0, nullptr, nullptr));
        };
        Operation *lastProduct =
            product(accRows, w.view, allColumns ? colCount * products : colCount);
        if (products == 2 && !allColumns)
          lastProduct = product(shift(accRows, an * accBytes), w2.view, colCount);
        sc.releasesOperands(lastProduct);
        // The product needs its operands only; the epilogue's inputs of
        // this step are waited for on the SFU, by a one-element copy of one
        // of them onto itself, so that the PT need not wait for them.
        if (last && epilogue && lateView && !loadInit)
          sc.waitsForLateLoads(sc.add(HwUnaryOp::create(builder, loc, "copy", lateView, lateView,
                                                        1, 1, nullptr, 0, nullptr, nullptr)));
        if (last && epilogue)
          emitEpilogue(em, sc, loc, tile, slotAt(2, outCopy), epiViews, tempAt, r0, r1, c0, c1,
                       an, n0);
        else if (epilogue)
          // Steps signal their completion on one counter, which the stores
          // and the loads of later steps wait for: it must count steps in
          // order. An epilogue ends its step on the SFU long after the PT
          // has finished the next steps, so every step ends on the SFU,
          // here with a one-element copy of the accumulator onto itself.
          sc.add(HwUnaryOp::create(builder, loc, "copy", em.lx(accType, accRows.getOffset(),
                                                                {accBytes, accBytes, 0}),
                                   em.lx(accType, accRows.getOffset(), {accBytes, accBytes, 0}),
                                   1, 1, nullptr, 0, nullptr, nullptr));
        else if (last && staged() && !inOne) {
          // Narrowed in place, each product's columns where its stores read
          // them: the rows keep their layout at half the pitch.
          auto rowsOf = [&](RefAttr r, int64_t e) {
            return em.lx(r.getDtype(), r.getOffset(), {tn * products * e, e, 0});
          };
          auto convert = [&](int64_t col, int64_t cols) {
            sc.add(HwUnaryOp::create(builder, loc, "copy",
                                     shift(rowsOf(stage, es), (r0 * tn * products + col) * es),
                                     shift(rowsOf(acc, 4), (r0 * tn * products + col) * 4),
                                     rowCount, cols, nullptr, 0, nullptr, nullptr));
          };
          if (products == 1 || allColumns) {
            convert(c0, colCount * (allColumns ? products : 1));
          } else {
            convert(c0, colCount);
            convert(an + c0, colCount);
          }
        }
      };
      return step;
    };
    em.pipeline(physicalCore(grid, cores, core), loc, numSteps, stepAt);
  }
  return success();
}

void MatmulPlan::emitEpilogue(HwEmitter &em, StepCompute &sc, Location loc,
                              ArrayRef<int64_t> tile, int64_t accAt,
                              ArrayRef<RefAttr> inputViews, ArrayRef<int64_t> tempAt, int64_t r0,
                              int64_t r1, int64_t c0, int64_t c1, int64_t productCols,
                              int64_t n0) const {
  int64_t tn = tile[1], er = tile[3], es = esOf(out);
  const BodyPlan &body = epiPlan->getBodyPlan();
  Value yielded = cast<YieldOp>(epilogue.getBody().front().getTerminator()).getValues()[0];
  // An epilogue over rows and columns is one block of all the columns.
  SmallVector<EpiBlock> blocks = epiBlock ? epilogueBlocks(c0, c1) : SmallVector<EpiBlock>{{c0, {}}};
  int64_t cols = epiBlock ? epiColSizes.back() : c1 - c0;
  for (auto [s0, s1] : epilogueStrips(r0, r1, er, int64_t(blocks.size()))) {
    int64_t rows = s1 - s0;
    // Row s0 of block j: of the f32 accumulator, of the output written over
    // it, and of each loaded input (a broadcast row stays put).
    auto output = [&](int64_t j) {
      return em.lx(out.dtype, accAt + (s0 * tn + blocks[j].col) * es, {tn * es, es, 0});
    };
    auto view = [&](Value v, int64_t j) -> RefAttr {
      const EpiBlock &blk = blocks[j];
      const BodyValue &info = body.values.at(v);
      switch (info.kind) {
      case BodyValue::Kind::input: {
        const LinearAccess &a = epiPlan->getInputAccess(info.index);
        if (int64_t p = productOf[info.index]; p >= 0) {
          int64_t col = epiBlock ? a.base + blockOffset(a, blk.loops) : blk.col;
          return em.lx(uint8_t(ISA::DType::f32),
                       accAt + (s0 * tn * products + p * productCols + col) * 4,
                       {tn * products * 4, 4, 0});
        }
        RefAttr r = inputViews[info.index];
        ArrayRef<int64_t> st = r.getStrides();
        int64_t at = epiBlock ? blockOffset(a, blk.loops) * deviceDTypeBytes(r.getDtype())
                              : blk.col * st[1];
        return em.lx(r.getDtype(), r.getOffset() + s0 * st[0] + at, {st[0], st[1], 0});
      }
      case BodyValue::Kind::output:
        return output(j);
      default: {
        int64_t tes = deviceDTypeBytes(info.dtype);
        return em.lx(info.dtype, tempAt[info.index] + blk.col * tes, {tn * tes, tes, 0});
      }
      }
    };
    // An index of the column loops (analyzeBlocks), at the block's place in
    // the output.
    auto index = [&](IndexExprOp expr, RefAttr dst, int64_t count, int64_t j) {
      assert(epiBlock && "an index in the body is refused by analyzeEpilogue");
      AffineMap map = expr.getMap();
      LinearAccess at = linearCoefficients(map.getResult(0), map.getNumDims());
      int64_t value = at.base;
      for (auto [l, v] : llvm::enumerate(blocks[j].loops))
        value += at.strides[l + 1] * (v + (l == 0 ? n0 / epiBlock : 0));
      sc.add(HwFillOp::create(sc.b(), loc, dst, APFloat(double(value)), APFloat(0.0),
                              APFloat(0.0), rows, count, nullptr, 0, nullptr, nullptr));
    };
    emitBody(sc, loc, body, rows, cols, int64_t(blocks.size()), view, index,
             [](IndexExprOp) { return true; });
    if (body.values.at(yielded).kind != BodyValue::Kind::output)
      for (size_t j = 0; j < blocks.size(); ++j)
        sc.add(HwUnaryOp::create(sc.b(), loc, "copy", output(int64_t(j)),
                                 view(yielded, int64_t(j)), rows, cols, nullptr, 0, nullptr,
                                 nullptr));
  }
}

} // namespace

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeMatmulPlan(Operation *op,
                                                              const ::spyre::Arch &arch) {
  return analyzedPlan<MatmulPlan>(op, arch);
}
