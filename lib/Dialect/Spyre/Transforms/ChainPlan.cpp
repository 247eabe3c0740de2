//===- ChainPlan.cpp - two products and their epilogues in one kernel -----===//
//
// A multilayer perceptron, y = epi(act(x @ W1) @ W2), in one pass over the
// card: the hidden activations h = act(x @ W1) stay in LX and never reach
// device memory. The cores form a grid of row groups x hidden slices. A core
// keeps its group's rows of x in LX and computes h for its slice of the
// hidden units a chunk at a time: the first product on the PT, the
// activation (its epilogue) on the SFU while the PT computes the next
// chunk. Its second product then covers every output column of its rows,
// summed over its slice's hidden units only: a partial sum. After a barrier
// the cores of a row group add their partial sums over the ring: each owns
// a block of the output's columns, receives the others' partial sums of
// that block, adds them on the SFU, runs the second product's epilogue
// (bias, residual, cast) and stores the block.
//
// Every core of a hidden slice loads the same weight chunks at the same
// steps, so the card reads them once for all row groups (the broadcast
// rule of SPYRE_HW.md). A slice's cores are numbered a row group apart, so
// that the slices, and their weight bytes, divide between the memory ports.
//
//===----------------------------------------------------------------------===//

#include "GenericPlan.h"
#include "HwEmitter.h"
#include "PlanKinds.h"
#include "spyre-mlir/Isa/Isa.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

namespace {

/// Tile sizes: rows of a row group, hidden slices, hidden units per chunk of
/// the first product, output columns per chunk of the second, rows of an
/// epilogue strip (the body's temporaries).
enum TileSize : unsigned { kRows, kSlices, kHidden, kCols, kStrip, kTileSizes };

/// The LX slots, in the order of `spyre.lx`; each epilogue's loaded inputs
/// and temporaries follow.
enum Slot : unsigned { kX, kWeights, kProduct, kHiddenTile, kPartial, kReceived, kOut, kFence };

/// A matrix in device memory: its buffer, type, first element and row
/// stride in elements (columns are contiguous).
struct Matrix {
  Value value;
  uint8_t dtype = 0;
  int64_t base = 0, rowStride = 0;
};

/// A product's epilogue: its generic, plan, and which input is the product.
struct Epilogue {
  mutable GenericOp generic;
  std::unique_ptr<GenericPlan> plan;
  int64_t productInput = -1;
  /// The inputs loaded from device memory: a row broadcast over the rows
  /// (a bias) or a tile of the output's shape (a residual).
  SmallVector<unsigned> loaded;
  bool broadcastsRow(unsigned i) const { return plan->getInputAccess(i).strides[0] == 0; }
};

class ChainPlan : public OpPlan {
public:
  ChainPlan(FusedOp op, const ::spyre::Arch &arch) : OpPlan(op, arch), fused(op) {}
  LogicalResult analyze();

  SPYRE_OPPLAN_OVERRIDES
  std::optional<double> estimatedCycles(int64_t cores, int64_t lxBytes) const override {
    SmallVector<int64_t> tile = chooseTile(cores, lxBytes);
    if (tile.empty())
      return std::nullopt;
    return estimate(tile);
  }

private:
  LogicalResult analyzeEpilogue(Epilogue &e, GenericOp generic, Value product, int64_t cols,
                                StringRef which);
  /// Hidden units [first, second) of slice `s` of `slices`, whole sticks.
  std::pair<int64_t, int64_t> slice(int64_t s, int64_t slices) const;
  /// Output columns [first, second) of column block `c` of `blocks`.
  std::pair<int64_t, int64_t> block(int64_t c, int64_t blocks) const;
  /// The part of a row group's output that core `s` of its `slices` owns:
  /// rows [r0, r1) of the group's `rows` and columns [c0, c1). Every group's
  /// output is cut the same way, into the row parts x column blocks (of
  /// whole sticks) that are most even for groups of `tm` rows; a short last
  /// group may leave a core no rows.
  struct Piece {
    int64_t r0, r1, c0, c1;
    int64_t elements() const { return (r1 - r0) * (c1 - c0); }
  };
  Piece piece(int64_t s, int64_t slices, int64_t tm, int64_t rows) const;
  /// Row parts of the pieces of `slices` cores (the column blocks are
  /// slices / that), the split whose largest piece of `tm` rows is least.
  int64_t rowParts(int64_t slices, int64_t tm) const;
  /// Elements of the largest piece of a `tm`-row group.
  int64_t largestPiece(int64_t slices, int64_t tm) const;
  int64_t rowGroups(ArrayRef<int64_t> tile) const { return llvm::divideCeil(m, tile[kRows]); }
  int64_t widestSlice(int64_t slices) const;
  bool fits(ArrayRef<int64_t> tile, int64_t lxBytes) const;
  double estimate(ArrayRef<int64_t> tile) const;
  /// The device transfer of weight `w`'s chunk: rows [r0, r0 + rows) and
  /// columns [c0, c0 + cols) of its storage, into LX at `at`.
  Transfer weightChunk(HwEmitter &em, const Matrix &w, int64_t r0, int64_t rows, int64_t c0,
                       int64_t cols, int64_t at) const;
  /// Loads of epilogue `e`'s loaded inputs for rows [r0, r0 + rows) and
  /// columns [c0, c0 + cols) into their slots at `slotAt` (one per input).
  void epilogueLoads(HwEmitter &em, const Epilogue &e, int64_t r0, int64_t rows, int64_t c0,
                     int64_t cols, ArrayRef<int64_t> slotAt, SmallVectorImpl<Transfer> &out) const;
  /// Runs `e`'s body over `rows` x `cols` in strips of `strip` rows: the
  /// product read at `productAt` (f32, `productPitch` bytes a row), the
  /// loaded inputs at `inputAt`, temporaries at `tempAt`, the output written
  /// at `outAt` (`outPitch` bytes a row).
  void emitEpilogue(HwEmitter &em, StepCompute &sc, Location loc, const Epilogue &e,
                    int64_t rows, int64_t cols, int64_t strip, int64_t productAt,
                    int64_t productPitch, ArrayRef<int64_t> inputAt, ArrayRef<int64_t> tempAt,
                    int64_t outAt, int64_t outPitch) const;
  SmallVector<LxSlot> slotsOf(ArrayRef<int64_t> tile) const;
  /// The slots, with the second epilogue's inputs live from the start when
  /// `early` (loaded while the second product runs, before the barrier).
  SmallVector<LxSlot> slotsOf(ArrayRef<int64_t> tile, bool early) const;
  /// Whether the second epilogue's inputs load before the barrier: where
  /// their slots fit LX beside the products' (`early`, slotsOf's with them
  /// live from the start; else they share LX with the first phase's slots
  /// and load after it).
  bool loadsEpilogueEarly(ArrayRef<LxSlot> early) const;

  mutable FusedOp fused;
  Epilogue act, epi;
  /// x is m x d, W1 d x f (stored f x d when transposed), W2 f x d (stored
  /// d x f when transposed), y m x d.
  int64_t m = 0, d = 0, f = 0;
  Matrix x, w1, w2, y;
  bool w1Transposed = false, w2Transposed = false;
  uint8_t hType = 0;
  int64_t es = 2; // bytes of a PT input element
};

LogicalResult ChainPlan::analyze() {
  auto refuse = [&]() { return op->emitError() << "cannot run the two products as one chain: "; };
  SmallVector<MatmulOp> mms;
  SmallVector<GenericOp> generics;
  for (Operation &member : fused.getBody().front()) {
    if (auto mm = dyn_cast<MatmulOp>(member))
      mms.push_back(mm);
    else if (auto g = dyn_cast<GenericOp>(member))
      generics.push_back(g);
  }
  if (mms.size() != 2 || generics.size() != 2 || !mms[0]->isBeforeInBlock(generics[0]) ||
      !generics[0]->isBeforeInBlock(mms[1]) || !mms[1]->isBeforeInBlock(generics[1]))
    return refuse() << "the group is not a product, its epilogue, a product and its epilogue";
  for (MatmulOp mm : mms) {
    if (mm->hasAttr("transpose_lhs") || mm->hasAttr("accumulate"))
      return refuse() << "a product transposes its lhs or accumulates";
    for (Value v : mm->getOperands()) {
      auto type = cast<BufferType>(v.getType());
      if (!type.hasStaticShape() || type.getRank() != 2)
        return refuse() << "an operand is not a matrix of static shape";
      if (LayoutAttr layout = type.getLayout(); layout && layout.getStick())
        return refuse() << "an operand is stored in sticks";
      SmallVector<int64_t> strides = elementStrides(type);
      if (strides[1] != 1)
        return refuse() << "an operand's rows are not contiguous";
    }
  }
  auto matrix = [&](Value v) {
    auto type = cast<BufferType>(v.getType());
    return Matrix{v, deviceDType(type.getElementType()), 0, elementStrides(type)[0]};
  };
  x = matrix(mms[0].getLhs());
  w1 = matrix(mms[0].getRhs());
  w2 = matrix(mms[1].getRhs());
  w1Transposed = mms[0]->hasAttr("transpose_rhs");
  w2Transposed = mms[1]->hasAttr("transpose_rhs");
  auto xType = cast<BufferType>(x.value.getType());
  auto p1Type = cast<BufferType>(mms[0].getInit().getType());
  auto p2Type = cast<BufferType>(mms[1].getInit().getType());
  m = xType.getDimSize(0);
  d = xType.getDimSize(1);
  f = p1Type.getDimSize(1);
  if (m == 0 || d == 0 || f == 0)
    return refuse() << "an empty product";
  if (p2Type.getDimSize(0) != m || p2Type.getDimSize(1) != d)
    return refuse() << "the second product is not " << m << " x " << d;
  for (const Matrix *mat : {&x, &w1, &w2})
    if (deviceDTypeBytes(mat->dtype) != 2)
      return refuse() << "the matrix unit takes 16-bit inputs here";
  // The hidden activations: the first epilogue's output, a temporary of the
  // group that only the second product reads (as its lhs).
  Value hidden = mms[1].getLhs();
  auto hiddenAlloc = hidden.getDefiningOp<AllocOp>();
  if (!hiddenAlloc || hiddenAlloc->getParentOp() != fused)
    return refuse() << "the second product's lhs is not a temporary of the group";
  for (Operation *user : hidden.getUsers())
    if (user != mms[1].getOperation() && user != generics[0].getOperation() &&
        !isa<DeallocOp>(user))
      return refuse() << "the hidden activations are read by '" << user->getName() << "'";
  if (generics[0].getOutputs().size() != 1 || generics[0].getOutputs()[0] != hidden)
    return refuse() << "the first epilogue does not write the second product's lhs";
  hType = deviceDType(cast<BufferType>(hidden.getType()).getElementType());
  if (deviceDTypeBytes(hType) != 2)
    return refuse() << "the hidden activations are not 16-bit";
  if (failed(analyzeEpilogue(act, generics[0], mms[0].getInit(), f, "first")) ||
      failed(analyzeEpilogue(epi, generics[1], mms[1].getInit(), d, "second")))
    return failure();
  const LinearAccess &written = act.plan->getOutputAccess(0);
  if (written.base != 0 || written.strides[0] != f || written.strides[1] != 1)
    return refuse() << "the first epilogue does not write the hidden activations row-major";
  const LinearAccess &out = epi.plan->getOutputAccess(0);
  if (out.strides[0] < d || out.strides[1] != 1)
    return refuse() << "the second epilogue does not write row-major rows";
  y = Matrix{epi.generic.getOutputs()[0], epi.plan->getOutputType(0), out.base, out.strides[0]};
  for (Value input : epi.generic.getInputs())
    if (input == y.value)
      return refuse() << "the second epilogue reads its output";
  if (y.value == x.value || y.value == w1.value || y.value == w2.value)
    return refuse() << "the output is an operand of a product";
  return success();
}

LogicalResult ChainPlan::analyzeEpilogue(Epilogue &e, GenericOp generic, Value product,
                                         int64_t cols, StringRef which) {
  auto refuse = [&]() {
    return op->emitError() << "cannot run the two products as one chain: the " << which
                           << " epilogue ";
  };
  auto alloc = product.getDefiningOp<AllocOp>();
  if (!alloc || alloc->getParentOp() != fused)
    return refuse() << "does not read a product that is a temporary of the group";
  e.generic = generic;
  e.plan = std::make_unique<GenericPlan>(generic, arch);
  if (failed(e.plan->analyze()))
    return failure();
  ArrayRef<int64_t> sizes = e.plan->getSizes();
  if (sizes.size() != 2 || sizes[0] != m || sizes[1] != cols ||
      llvm::is_contained(e.plan->getReductionLoops(), true))
    return refuse() << "is not elementwise over the " << m << " x " << cols << " product";
  if (e.plan->getNumOutputs() != 1)
    return refuse() << "has more than one output";
  for (auto [i, input] : llvm::enumerate(generic.getInputs())) {
    const LinearAccess &a = e.plan->getInputAccess(unsigned(i));
    if (input == product) {
      if (e.productInput >= 0 || a.base != 0 || a.strides[0] != cols || a.strides[1] != 1)
        return refuse() << "reads the product other than once at the output's index";
      e.productInput = int64_t(i);
      continue;
    }
    if (a.strides[1] != 1 || (a.strides[0] != 0 && a.strides[0] < cols))
      return refuse() << "reads input " << i << " other than as a row or a row-major tile";
    e.loaded.push_back(unsigned(i));
  }
  if (e.productInput < 0)
    return refuse() << "does not read the product";
  for (auto &[bodyOp, vop] : e.plan->getBodyPlan().ops)
    if (isa<IndexExprOp>(bodyOp))
      return refuse() << "uses spyre.index_expr";
  return success();
}

std::pair<int64_t, int64_t> ChainPlan::slice(int64_t s, int64_t slices) const {
  int64_t unit = arch.stickBytes / deviceDTypeBytes(hType);
  int64_t units = llvm::divideCeil(f, unit);
  return {std::min(f, units * s / slices * unit), std::min(f, units * (s + 1) / slices * unit)};
}

std::pair<int64_t, int64_t> ChainPlan::block(int64_t s, int64_t slices) const {
  int64_t unit = arch.stickBytes / deviceDTypeBytes(y.dtype);
  int64_t units = llvm::divideCeil(d, unit);
  return {std::min(d, units * s / slices * unit), std::min(d, units * (s + 1) / slices * unit)};
}

int64_t ChainPlan::widestSlice(int64_t slices) const {
  int64_t widest = 0;
  for (int64_t s = 0; s < slices; ++s) {
    auto [a, b] = slice(s, slices);
    widest = std::max(widest, b - a);
  }
  return widest;
}

int64_t ChainPlan::rowParts(int64_t slices, int64_t tm) const {
  int64_t units = llvm::divideCeil(d, arch.stickBytes / deviceDTypeBytes(y.dtype));
  int64_t best = 0, bestElements = 0;
  for (int64_t parts = 1; parts <= std::min(slices, tm); ++parts) {
    if (slices % parts || slices / parts > units)
      continue;
    int64_t widest = 0;
    for (int64_t c = 0; c < slices / parts; ++c)
      widest = std::max(widest, block(c, slices / parts).second - block(c, slices / parts).first);
    int64_t elements = llvm::divideCeil(tm, parts) * widest;
    if (!best || elements < bestElements)
      best = parts, bestElements = elements;
  }
  return best;
}

ChainPlan::Piece ChainPlan::piece(int64_t s, int64_t slices, int64_t tm, int64_t rows) const {
  int64_t parts = rowParts(slices, tm), blocks = slices / parts;
  int64_t r = s / blocks;
  auto [c0, c1] = block(s % blocks, blocks);
  return {rows * r / parts, rows * (r + 1) / parts, c0, c1};
}

int64_t ChainPlan::largestPiece(int64_t slices, int64_t tm) const {
  int64_t largest = 0;
  for (int64_t s = 0; s < slices; ++s)
    largest = std::max(largest, piece(s, slices, tm, tm).elements());
  return largest;
}

int64_t ChainPlan::parallelUnits() const { return m * d; }

LogicalResult ChainPlan::verifyTile(ArrayRef<int64_t> tile) const {
  if (tile.size() != kTileSizes)
    return op->emitError() << "spyre.tile of a chain of two products is [rows, slices, hidden "
                              "chunk, output columns, strip rows], not "
                           << tile.size() << " sizes";
  int64_t limits[] = {m, std::min(f, d), f, d, tile[kRows]};
  for (unsigned i = 0; i < kTileSizes; ++i)
    if (tile[i] < 1 || tile[i] > limits[i])
      return op->emitError() << "spyre.tile size " << tile[i] << " is not in [1, " << limits[i]
                             << "]";
  for (int64_t s = 0; s < tile[kSlices]; ++s) {
    auto [h0, h1] = slice(s, tile[kSlices]);
    if (h1 <= h0)
      return op->emitError() << "spyre.tile's " << tile[kSlices]
                             << " slices leave a core without hidden units";
  }
  if (rowParts(tile[kSlices], tile[kRows]) == 0)
    return op->emitError() << "spyre.tile's " << tile[kSlices]
                           << " slices cannot share the output of a row group";
  return success();
}

bool ChainPlan::loadsEpilogueEarly(ArrayRef<LxSlot> early) const {
  if (epi.loaded.empty())
    return false;
  int64_t total = 0;
  assignLx(early, arch.stickBytes, total);
  return total <= arch.lxUsableBytes();
}

SmallVector<LxSlot> ChainPlan::slotsOf(ArrayRef<int64_t> tile) const {
  SmallVector<LxSlot> early = slotsOf(tile, true);
  return loadsEpilogueEarly(early) ? early : slotsOf(tile, false);
}

SmallVector<LxSlot> ChainPlan::slotsOf(ArrayRef<int64_t> tile, bool early) const {
  int64_t tm = tile[kRows], slices = tile[kSlices], hc = tile[kHidden], wc = tile[kCols],
          strip = tile[kStrip];
  int64_t fs = widestSlice(slices), piece = largestPiece(slices, tm);
  int64_t hes = deviceDTypeBytes(hType);
  // Positions: the first phase's body ops, then the second's; a slot of the
  // whole phase lives over all its positions.
  auto span = [](const Epilogue &e) {
    int64_t positions = int64_t(e.plan->getBodyPlan().ops.size()) + 1;
    for (const BodyTemp &temp : e.plan->getBodyPlan().temps)
      positions = std::max(positions, temp.end);
    return positions;
  };
  int64_t actOps = span(act), end = actOps + span(epi);
  SmallVector<LxSlot> result = {
      {"x", tm * d * es, 1, 0, actOps},
      {"weights", std::max(d * hc, fs * wc) * es, 2, 0, actOps},
      {"product", tm * hc * 4, 2, 0, actOps},
      {"hidden", tm * fs * hes, 1, 0, actOps},
      {"partial", tm * d * 4, 1, 0, end},
      {"received", std::max<int64_t>(1, slices - 1) * piece * 4, 1, actOps, end},
      {"out", piece * deviceDTypeBytes(y.dtype), 1, actOps, end},
      {"fence", 4, 1, 0, actOps}};
  for (unsigned i : act.loaded)
    result.push_back({"act.input" + std::to_string(i),
                      (act.broadcastsRow(i) ? 1 : tm) * hc *
                          deviceDTypeBytes(act.plan->getInputType(i)),
                      2, 0, actOps});
  for (auto [i, temp] : llvm::enumerate(act.plan->getBodyPlan().temps))
    result.push_back({"act.temp" + std::to_string(i), strip * hc * deviceDTypeBytes(temp.dtype),
                      1, temp.begin, temp.end});
  for (unsigned i : epi.loaded)
    result.push_back({"epi.input" + std::to_string(i),
                      (epi.broadcastsRow(i) ? d : piece) *
                          deviceDTypeBytes(epi.plan->getInputType(i)),
                      1, early ? 0 : actOps, end});
  for (auto [i, temp] : llvm::enumerate(epi.plan->getBodyPlan().temps))
    result.push_back({"epi.temp" + std::to_string(i), piece * deviceDTypeBytes(temp.dtype),
                      1, actOps + temp.begin, actOps + temp.end});
  return result;
}

SmallVector<LxSlot> ChainPlan::slots(ArrayRef<int64_t> tile) const { return slotsOf(tile); }

bool ChainPlan::fits(ArrayRef<int64_t> tile, int64_t lxBytes) const {
  int64_t total = 0;
  assignLx(slotsOf(tile), arch.stickBytes, total);
  return total <= lxBytes;
}

double ChainPlan::estimate(ArrayRef<int64_t> tile) const {
  int64_t tm = std::min(tile[kRows], m), slices = tile[kSlices], hc = tile[kHidden],
          wc = tile[kCols];
  int64_t fs = widestSlice(slices), piece = largestPiece(slices, tm);
  double bus = arch.memoryBytesPerCycle();
  // The busiest core's PT: the first product a chunk at a time, the second
  // a column chunk at a time over its slice.
  double first = 0, second = 0;
  for (int64_t h = 0; h < fs; h += hc) {
    int64_t cw = std::min(hc, fs - h);
    first += arch.ptCycles(double(tm), double(d), double(cw), double((tm * d + d * cw) * es),
                           double(tm * cw * 4));
  }
  for (int64_t c = 0; c < d; c += wc) {
    int64_t cw = std::min(wc, d - c);
    second += arch.ptCycles(double(tm), double(fs), double(cw), double((tm * fs + fs * cw) * es),
                            double(tm * cw * 4));
  }
  // An epilogue's instructions over `elements`, each at the rate of the
  // bytes it streams per element (its operands and result at their types;
  // immediates and constants held as one element stream none), and the
  // copy of a yielded value the body does not write to its output.
  auto sfu = [&](const Epilogue &e, int64_t elements) {
    const BodyPlan &body = e.plan->getBodyPlan();
    auto streamed = [&](Value v) -> double {
      auto it = body.values.find(v);
      if (it == body.values.end() || it->second.kind == BodyValue::Kind::immediate ||
          it->second.scalar)
        return 0;
      return double(deviceDTypeBytes(it->second.dtype));
    };
    double cycles = 0;
    for (auto &[bodyOp, vop] : body.ops) {
      double bytes = streamed(bodyOp->getResult(0));
      for (Value operand : bodyOp->getOperands())
        bytes += streamed(operand);
      cycles += arch.sfuCycles(double(elements), std::max(bytes, 1.0), false, false);
    }
    Value yielded = cast<YieldOp>(e.generic.getBody().front().getTerminator()).getValues()[0];
    if (body.values.at(yielded).kind != BodyValue::Kind::output)
      cycles += arch.sfuCycles(double(elements), 8, false, false);
    return cycles;
  };
  // Before the first product: x and every slice's first weight chunk (read
  // once for the row groups).
  double fill = double(m * d * es + d * std::min(hc, fs) * es * slices) / bus +
                double(arch.dmaLatencyCycles);
  // The activations overlap the next chunks' products, but for the last;
  // the second product waits for it. Each phase streams its weights, once
  // for all the full row groups, which load them in step, and once more
  // for a short last group, whose products finish sooner (ViT's 197 tokens
  // in four groups of 40 and one of 37 read the weights twice, not five
  // times).
  double weights = double(f * d * es) / bus * (m % tm ? 2.0 : 1.0);
  double phase1 = std::max({first, sfu(act, tm * fs), weights}) + sfu(act, tm * std::min(hc, fs)) +
                  std::max(second, weights);
  // The exchange: the ring transfers, the sums and the epilogue of a piece,
  // then its store.
  double exchange = double(slices - 1) * (double(piece) * 4 / double(arch.ringBytesPerCycle) +
                                          arch.sfuCycles(double(piece), 12, false, false)) +
                    sfu(epi, piece) + double(arch.dmaLatencyCycles) +
                    double(m * d * deviceDTypeBytes(y.dtype)) / bus;
  return fill + phase1 + exchange;
}

/// Rows below which a row group feeds the PT too little to be worth trying.
constexpr int64_t kMinGroupRows = 16;

SmallVector<int64_t> ChainPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  double best = 0;
  SmallVector<int64_t> chosen;
  int64_t unit = arch.stickBytes / es;
  // Row groups of near-equal rows: a short last group would leave its
  // cores idle and their weight loads out of step with the others'.
  int64_t lastRows = 0;
  for (int64_t g = 1; g <= std::min(cores, m); ++g) {
    int64_t tm = llvm::divideCeil(m, g);
    int64_t groups = llvm::divideCeil(m, tm);
    if (tm == lastRows || tm < std::min<int64_t>(m, kMinGroupRows))
      continue;
    lastRows = tm;
    int64_t slices = std::min<int64_t>({cores / groups, int64_t(llvm::divideCeil(f, unit)),
                                        int64_t(llvm::divideCeil(d, unit))});
    for (int64_t hc : {64, 128, 256, 512}) {
      hc = std::min(hc, widestSlice(slices));
      for (int64_t wc : {64, 128, 256, 512, 1024}) {
        wc = std::min(wc, d);
        SmallVector<int64_t> tile = {tm, slices, hc, wc, 0};
        if (failed(verifyTile({tm, slices, hc, wc, 1})))
          continue;
        tile[kStrip] = largestFitting(tm, 8, [&](int64_t strip) {
          tile[kStrip] = strip;
          return fits(tile, lxBytes);
        });
        if (tile[kStrip] == 0)
          continue;
        double time = estimate(tile);
        if (chosen.empty() || time < best) {
          best = time;
          chosen = tile;
        }
      }
    }
  }
  return chosen;
}

Transfer ChainPlan::weightChunk(HwEmitter &em, const Matrix &w, int64_t r0, int64_t rows,
                                int64_t c0, int64_t cols, int64_t at) const {
  Transfer t;
  t.dst = em.lx(w.dtype, at, {cols * es, 0, 0});
  t.src = em.device(w.value, w.dtype, (w.base + r0 * w.rowStride + c0) * es,
                    {w.rowStride * es, 0, 0});
  t.rowBytes = cols * es;
  t.counts = {rows, 1, 1};
  return t;
}

void ChainPlan::epilogueLoads(HwEmitter &em, const Epilogue &e, int64_t r0, int64_t rows,
                              int64_t c0, int64_t cols, ArrayRef<int64_t> slotAt,
                              SmallVectorImpl<Transfer> &out) const {
  for (auto [j, i] : llvm::enumerate(e.loaded)) {
    const LinearAccess &a = e.plan->getInputAccess(i);
    uint8_t dtype = e.plan->getInputType(i);
    int64_t ies = deviceDTypeBytes(dtype);
    Transfer t;
    t.dst = em.lx(dtype, slotAt[j], {cols * ies, 0, 0});
    t.src = em.device(e.generic.getInputs()[i], dtype, (a.base + r0 * a.strides[0] + c0) * ies,
                      {a.strides[0] * ies, 0, 0});
    t.rowBytes = cols * ies;
    t.counts = {e.broadcastsRow(i) ? 1 : rows, 1, 1};
    out.push_back(t);
  }
}

void ChainPlan::emitEpilogue(HwEmitter &em, StepCompute &sc, Location loc, const Epilogue &e,
                             int64_t rows, int64_t cols, int64_t strip, int64_t productAt,
                             int64_t productPitch, ArrayRef<int64_t> inputAt,
                             ArrayRef<int64_t> tempAt, int64_t outAt, int64_t outPitch) const {
  const BodyPlan &body = e.plan->getBodyPlan();
  uint8_t outType = e.plan->getOutputType(0);
  int64_t oes = deviceDTypeBytes(outType);
  Value yielded = cast<YieldOp>(e.generic.getBody().front().getTerminator()).getValues()[0];
  for (int64_t s0 = 0; s0 < rows; s0 += strip) {
    int64_t r = std::min(strip, rows - s0);
    auto output = [&]() { return em.lx(outType, outAt + s0 * outPitch, {outPitch, oes, 0}); };
    auto view = [&](Value v) -> RefAttr {
      const BodyValue &info = body.values.at(v);
      switch (info.kind) {
      case BodyValue::Kind::input: {
        if (int64_t(info.index) == e.productInput)
          return em.lx(uint8_t(ISA::DType::f32), productAt + s0 * productPitch,
                       {productPitch, 4, 0});
        unsigned j = unsigned(llvm::find(e.loaded, info.index) - e.loaded.begin());
        uint8_t dtype = e.plan->getInputType(info.index);
        int64_t ies = deviceDTypeBytes(dtype);
        if (e.broadcastsRow(info.index))
          return em.lx(dtype, inputAt[j], {0, ies, 0});
        return em.lx(dtype, inputAt[j] + s0 * cols * ies, {cols * ies, ies, 0});
      }
      case BodyValue::Kind::output:
        return output();
      default: {
        int64_t tes = deviceDTypeBytes(info.dtype);
        return em.lx(info.dtype, tempAt[info.index], {cols * tes, tes, 0});
      }
      }
    };
    emitBody(
        sc, loc, body, r, cols, view,
        [](IndexExprOp, RefAttr, int64_t) { llvm_unreachable("refused by analyzeEpilogue"); },
        [](IndexExprOp) { return true; });
    if (body.values.at(yielded).kind != BodyValue::Kind::output)
      sc.add(HwUnaryOp::create(sc.b(), loc, "copy", output(), view(yielded), r, cols, nullptr,
                               0, nullptr, nullptr));
  }
}

LogicalResult ChainPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                               ArrayRef<int64_t> lxOffsets) const {
  const int64_t tm = tile[kRows], slices = tile[kSlices], hc = tile[kHidden], wc = tile[kCols],
                strip = tile[kStrip];
  const int64_t groups = rowGroups(tile);
  if (groups * slices > cores)
    return op->emitError() << "spyre.tile's " << groups << " row groups x " << slices
                           << " slices need more than the op's " << cores << " cores";
  const int64_t fs = widestSlice(slices);
  const int64_t hes = deviceDTypeBytes(hType), yes = deviceDTypeBytes(y.dtype);
  SmallVector<LxSlot> all = slotsOf(tile);
  auto at = [&](unsigned s) { return lxOffsets[s]; };
  unsigned next = kFence + 1;
  SmallVector<int64_t> actInputAt, actTempAt, epiInputAt, epiTempAt;
  for (size_t i = 0; i < act.loaded.size(); ++i)
    actInputAt.push_back(lxOffsets[next++]);
  for (size_t i = 0; i < act.plan->getBodyPlan().temps.size(); ++i)
    actTempAt.push_back(lxOffsets[next++]);
  for (size_t i = 0; i < epi.loaded.size(); ++i)
    epiInputAt.push_back(lxOffsets[next++]);
  for (size_t i = 0; i < epi.plan->getBodyPlan().temps.size(); ++i)
    epiTempAt.push_back(lxOffsets[next++]);
  Location loc = op->getLoc();
  // A slice's cores a group apart, and the cores in use spread evenly over
  // the op's: both memory ports carry weights when fewer cores run.
  const int64_t used = groups * slices;
  auto coreOf = [&](int64_t g, int64_t s) { return (g + groups * s) * cores / used; };
  // The second epilogue's inputs of a core's piece load during its last
  // step, where the DMA engine is idle, rather than after the barrier, when
  // every core loads them at once (GPT-2's layer: 12 us).
  const bool early = loadsEpilogueEarly(slotsOf(tile, true));

  // The hidden activations and the partial sums of each core.
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t r0 = g * tm, rows = std::min(tm, m - r0);
    for (int64_t s = 0; s < slices; ++s) {
      const int64_t h0 = slice(s, slices).first, h1 = slice(s, slices).second;
      const int64_t fw = h1 - h0, chunks = llvm::divideCeil(fw, hc),
                    colChunks = llvm::divideCeil(d, wc);
      auto stepAt = [&](int64_t t) {
        TileStep step;
        int64_t copy = t % 2;
        int64_t weightsAt = at(kWeights) + copy * all[kWeights].bytes;
        if (t < chunks) {
          // Hidden units [c0, c0 + cw) of the slice.
          int64_t c0 = h0 + t * hc, cw = std::min(hc, h1 - c0);
          // The weights first: only the product reads them, so the next
          // chunk but one may load them as soon as it is done (the
          // releaser), while the activation runs. x, loaded once, stays.
          step.loads.push_back(w1Transposed ? weightChunk(em, w1, c0, cw, 0, d, weightsAt)
                                            : weightChunk(em, w1, 0, d, c0, cw, weightsAt));
          if (t == 0) {
            Transfer load;
            load.dst = em.lx(x.dtype, at(kX), {d * es, 0, 0});
            load.src = em.device(x.value, x.dtype, (x.base + r0 * x.rowStride) * es,
                                 {x.rowStride * es, 0, 0});
            load.rowBytes = d * es;
            load.counts = {rows, 1, 1};
            step.loads.push_back(load);
          }
          // The product's slot of this chunk is free once the activation of
          // the chunk two before has read it: the chunk's loads after the
          // weights wait for that, and the product for them. Without such
          // loads the weights wait for the activation too.
          step.operandLoads = act.loaded.empty() ? 0 : step.loads.size();
          SmallVector<int64_t> inputAt;
          for (auto [j, i] : llvm::enumerate(act.loaded))
            inputAt.push_back(actInputAt[j] + copy * all[kFence + 1 + j].bytes);
          epilogueLoads(em, act, r0, rows, c0, cw, inputAt, step.loads);
          int64_t productAt = at(kProduct) + copy * all[kProduct].bytes;
          step.compute = [&, c0, cw, weightsAt, inputAt, productAt](StepCompute &sc) {
            Operation *product = sc.add(HwMatmulOp::create(sc.b(), loc, em.lx(uint8_t(ISA::DType::f32), productAt, {cw * 4, 0, 0}),
                                      em.lx(x.dtype, at(kX), {d * es, 0, 0}),
                                      em.lx(w1.dtype, weightsAt,
                                            {(w1Transposed ? d : cw) * es, 0, 0}),
                                      rows, d, cw, false, w1Transposed, false, nullptr, 0,
                                      nullptr, nullptr));
            if (!act.loaded.empty())
              sc.releasesOperands(product);
            emitEpilogue(em, sc, loc, act, rows, cw, strip, productAt, cw * 4, inputAt,
                         actTempAt, at(kHiddenTile) + (c0 - h0) * hes, fs * hes);
          };
          return step;
        }
        // Output columns [c0, c0 + cw) of the partial sums.
        int64_t c0 = (t - chunks) * wc, cw = std::min(wc, d - c0);
        step.loads.push_back(w2Transposed ? weightChunk(em, w2, c0, cw, h0, fw, weightsAt)
                                          : weightChunk(em, w2, h0, fw, c0, cw, weightsAt));
        if (early && t + 1 == chunks + colChunks) {
          const Piece own = piece(s, slices, tm, rows);
          if (own.r1 > own.r0)
            epilogueLoads(em, epi, r0 + own.r0, own.r1 - own.r0, own.c0, own.c1 - own.c0,
                          epiInputAt, step.prefetches);
        }
        // Its weights load once the product two steps before has read that
        // copy of the slot (the releaser), not once that step's activation
        // is done: the SFU paces the first phase, and the bus is free.
        step.operandLoads = step.loads.size();
        bool first = t == chunks;
        step.compute = [&, c0, cw, weightsAt, first](StepCompute &sc) {
          // The SFU runs in order: an instruction after the last chunk's
          // activation, which the product waits for, orders the product
          // after all of the hidden activations are written.
          if (first)
            sc.add(HwFillOp::create(sc.b(), loc, em.lx(uint8_t(ISA::DType::f32), at(kFence)),
                                    APFloat(0.0), APFloat(0.0), APFloat(0.0), 1, 1, nullptr, 0,
                                    nullptr, nullptr));
          sc.add(HwMatmulOp::create(sc.b(), loc,
                                    em.lx(uint8_t(ISA::DType::f32), at(kPartial) + c0 * 4, {d * 4, 0, 0}),
                                    em.lx(hType, at(kHiddenTile), {fs * hes, 0, 0}),
                                    em.lx(w2.dtype, weightsAt, {(w2Transposed ? fw : cw) * es, 0, 0}),
                                    rows, fw, cw, false, w2Transposed, false, nullptr, 0, nullptr,
                                    nullptr));
        };
        return step;
      };
      em.pipeline(coreOf(g, s), loc, chunks + colChunks, stepAt);
    }
  }
  // The exchange reads the partial sums: every core's second product done
  // first, its own too (with one slice the epilogue reads them on the SFU,
  // which would not wait for the PT otherwise).
  em.barrier();

  // The partial sums added across each row group, the second epilogue, the
  // output.
  SmallVector<int64_t> receivedBase;
  for (int64_t c = 0; c < cores; ++c)
    receivedBase.push_back(em.ringReceived(c));
  const int64_t receivedPitch = largestPiece(slices, tm) * 4;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t r0 = g * tm, rows = std::min(tm, m - r0);
    for (int64_t s = 0; s < slices; ++s) {
      const Piece own = piece(s, slices, tm, rows);
      const int64_t pieceRows = own.r1 - own.r0, cols = own.c1 - own.c0;
      // A ragged last group may leave a core no rows: it sends, receives
      // and stores nothing.
      SmallVector<RingSend> sends;
      for (int64_t p = 0; p < slices; ++p) {
        Piece theirs = piece(p, slices, tm, rows);
        if (p == s || theirs.r1 == theirs.r0)
          continue;
        int64_t index = s < p ? s : s - 1; // the sender's place among p's peers
        int64_t width = theirs.c1 - theirs.c0;
        sends.push_back({coreOf(g, p),
                         em.lx(uint8_t(ISA::DType::f32), at(kReceived) + index * receivedPitch,
                               {width * 4, 0, 0}),
                         em.lx(uint8_t(ISA::DType::f32),
                               at(kPartial) + (theirs.r0 * d + theirs.c0) * 4, {d * 4, 0, 0}),
                         width * 4,
                         {theirs.r1 - theirs.r0, 1, 1}});
      }
      int64_t core = coreOf(g, s);
      if (pieceRows == 0) {
        em.exchange(core, loc, sends, {}, 0, nullptr, {});
        continue;
      }
      SmallVector<Transfer> loads;
      if (!early)
        epilogueLoads(em, epi, r0 + own.r0, pieceRows, own.c0, cols, epiInputAt, loads);
      Transfer store;
      store.dst = em.device(y.value, y.dtype,
                            (y.base + (r0 + own.r0) * y.rowStride + own.c0) * yes,
                            {y.rowStride * yes, 0, 0});
      store.src = em.lx(y.dtype, at(kOut), {cols * yes, 0, 0});
      store.rowBytes = cols * yes;
      store.counts = {pieceRows, 1, 1};
      const int64_t ownAt = at(kPartial) + (own.r0 * d + own.c0) * 4;
      em.exchange(
          core, loc, sends, loads, slices > 1 ? receivedBase[core] + slices - 1 : 0,
          [&](StepCompute &sc) {
            RefAttr sum = em.lx(uint8_t(ISA::DType::f32), ownAt, {d * 4, 4, 0});
            for (int64_t i = 0; i + 1 < slices; ++i)
              sc.add(HwBinaryOp::create(
                  sc.b(), loc, "add", sum, sum,
                  em.lx(uint8_t(ISA::DType::f32), at(kReceived) + i * receivedPitch,
                        {cols * 4, 4, 0}),
                  FloatAttr(), pieceRows, cols, nullptr, 0, nullptr, nullptr));
            size_t sums = sc.ops().size();
            emitEpilogue(em, sc, loc, epi, pieceRows, cols, pieceRows, ownAt, d * 4,
                         epiInputAt, epiTempAt, at(kOut), cols * yes);
            if (!loads.empty() && sums > 0)
              sc.waitsForLateLoads(sc.ops()[sums]);
          },
          store);
    }
  }
  return success();
}

} // namespace

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeChainPlan(FusedOp op,
                                                             const ::spyre::Arch &arch) {
  return analyzedPlan<ChainPlan>(op, arch);
}
