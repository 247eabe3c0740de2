//===- MatmulPlan.cpp - running matmul and batch_matmul on the card -------===//
//
// Output tiles (batch, tm rows, tn cols) are shared among a grid of cores
// (batch x rows x columns); each core walks K in tk-deep steps, accumulating
// in an f32 tile in LX, and stores the tile (converted to the output type on
// the SFU when it is 16-bit) after the last step. The cores of a grid row
// load the same lhs panel, those of a grid column the same rhs panel, at the
// same step of equally long programs: the card reads such a broadcast
// operand once for all of them (SPYRE_HW.md), so the grid, not each core,
// sets the device traffic.
//
// A 16-bit output is converted in place: the SFU narrows the f32 tile into
// the first half of its own slot (element i goes to byte 2i, after element
// i / 2 <= i has been read), so LX holds no staging copy and the operand
// panels get the room. When all of K fits one step, the PT writes the
// output type itself (it rounds its f32 sum on store, as the SFU would),
// and consecutive output tiles of a core that share an operand panel keep
// it in LX: the walk runs along the columns (the lhs panel stays) or the
// rows (the rhs panel stays), whichever reads fewer bytes.
//
//===----------------------------------------------------------------------===//

#include "PlanKinds.h"
#include "Spyre/Transforms/HwEmitter.h"
#include "Isa/Isa.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

namespace {

/// One matmul operand in device memory: element strides of its two matrix
/// dimensions and of the batch, and whether LX holds its tiles transposed.
struct Operand {
  Value value;
  uint8_t dtype;
  int64_t batchStride = 0, outerStride = 0, innerStride = 0;
  bool transposed = false; ///< LX holds (inner x outer) rather than (outer x inner)
};

class MatmulPlan : public OpPlan {
public:
  MatmulPlan(Operation *op, const ::spyre::Arch &arch) : OpPlan(op, arch) {}
  LogicalResult analyze();

  SPYRE_OPPLAN_OVERRIDES

private:
  bool staged() const { return out.dtype != uint8_t(ISA::DType::f32); }
  /// All of K in one step: the PT writes the output type itself.
  bool direct(ArrayRef<int64_t> tile) const { return tile[2] >= k && !accumulate; }
  /// Accumulating into a 16-bit output widens its current content into the
  /// f32 tile, which cannot be done in place (the wider element would
  /// overwrite one not yet read): only then a staging slot of its own.
  bool staging() const { return staged() && accumulate; }
  int64_t esOf(const Operand &o) const { return deviceDTypeBytes(o.dtype); }

  /// Cores along the batch, the output rows and the output columns.
  struct Grid {
    int64_t b = 1, m = 1, n = 1;
  };
  /// Whether a core walks its output tiles down the rows (the rhs panel
  /// stays in LX from tile to tile) rather than along the columns (the lhs
  /// panel stays). Panels stay only when all of K fits one step.
  bool walksRows(ArrayRef<int64_t> tile, Grid grid) const;
  /// Estimated cycles of the op with `tile` on `grid`.
  double estimate(ArrayRef<int64_t> tile, Grid grid) const;
  /// The grid of at most `cores` cores with the least estimated time for
  /// `tile`; `time` gets that estimate.
  Grid chooseGrid(int64_t cores, ArrayRef<int64_t> tile, double &time) const;

  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool accumulate = false;
  /// lhs is (m x k), rhs (k x n), out (m x n): "outer" is the first.
  Operand lhs, rhs, out;
};

int64_t MatmulPlan::parallelUnits() const { return batch * m * n; }

LogicalResult MatmulPlan::analyze() {
  Value lhsValue = op->getOperand(0), rhsValue = op->getOperand(1), outValue = op->getOperand(2);
  bool tl = op->hasAttr("transpose_lhs"), tr = op->hasAttr("transpose_rhs");
  accumulate = op->hasAttr("accumulate");
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
  if (batch == 0 || m == 0 || n == 0 || k == 0)
    return op->emitError() << "cannot run on the card: an empty matmul";
  return success();
}

LogicalResult MatmulPlan::verifyTile(ArrayRef<int64_t> tile) const {
  if (tile.size() != 3)
    return op->emitError() << "spyre.tile of a matmul is [tm, tn, tk], not " << tile.size()
                           << " sizes";
  int64_t limits[] = {m, n, k};
  for (int i = 0; i < 3; ++i)
    if (tile[i] < 1 || tile[i] > limits[i])
      return op->emitError() << "spyre.tile size " << tile[i] << " is not in [1, " << limits[i]
                             << "]";
  return success();
}

SmallVector<LxSlot> MatmulPlan::slots(ArrayRef<int64_t> tile) const {
  int64_t tm = tile[0], tn = tile[1], tk = tile[2];
  SmallVector<LxSlot> result = {{"lhs", tm * tk * esOf(lhs), 2},
                                {"rhs", tk * tn * esOf(rhs), 2},
                                {"acc", tm * tn * (direct(tile) ? esOf(out) : 4), 2}};
  if (staging())
    result.push_back({"staging", tm * tn * esOf(out), 2});
  return result;
}

bool MatmulPlan::walksRows(ArrayRef<int64_t> tile, Grid grid) const {
  if (tile[2] < k)
    return false;
  double mc = double(llvm::divideCeil(llvm::divideCeil(m, tile[0]), grid.m)),
         nc = double(llvm::divideCeil(llvm::divideCeil(n, tile[1]), grid.n));
  double lhsStays = double(m) * esOf(lhs) + double(n) * esOf(rhs) * mc,
         rhsStays = double(m) * esOf(lhs) * nc + double(n) * esOf(rhs);
  return rhsStays < lhsStays;
}

double MatmulPlan::estimate(ArrayRef<int64_t> tile, Grid grid) const {
  int64_t tm = tile[0], tn = tile[1], tk = tile[2];
  int64_t mt = llvm::divideCeil(m, tm), nt = llvm::divideCeil(n, tn), kt = llvm::divideCeil(k, tk);
  // The busiest core's share: its tiles along each grid dimension.
  double bc = double(llvm::divideCeil(batch, grid.b)), mc = double(llvm::divideCeil(mt, grid.m)),
         nc = double(llvm::divideCeil(nt, grid.n));
  double tiles = bc * mc * nc, steps = tiles * double(kt);
  double lhsBytes = double(tm * tk * esOf(lhs)), rhsBytes = double(tk * tn * esOf(rhs)),
         outBytes = double(tm * tn * esOf(out));
  double bw = arch.deviceBytesPerCycle(), port = double(arch.dmaPortBytesPerCycle),
         latency = double(arch.dmaLatencyCycles);
  // Device bus: an lhs row is read once for each output tile of a core's
  // row of tiles (shared by the grid row), an rhs column once for each of a
  // core's column of tiles (shared by the grid column). The cores run in
  // lock step, so every transfer's latency leaves the bus idle.
  // With all of K in one step the panel the walk keeps is read once per
  // core's block, not once per output tile.
  bool rows = walksRows(tile, grid), stays = kt == 1;
  double lhsLoads = stays && !rows ? bc * mc : steps, rhsLoads = stays && rows ? bc * nc : steps;
  double read = double(batch) * double(k) *
                (double(m) * esOf(lhs) * (stays && !rows ? 1 : nc) +
                 double(n) * esOf(rhs) * (stays && rows ? 1 : mc));
  double written = double(batch * m * n * esOf(out));
  if (accumulate)
    read += written;
  double transfers = lhsLoads + rhsLoads + tiles * (accumulate ? 2 : 1);
  double bus = arch.deviceCycles(read, written) + transfers * latency;
  // Each core's own transfers also pass its DMA engine.
  double own =
      (lhsLoads * lhsBytes + rhsLoads * rhsBytes + tiles * outBytes * (accumulate ? 2 : 1)) / port;
  // One step on the PT (peak rate or operand feed, plus fill and drain: the
  // card description's formula), the conversion of a finished tile on the
  // SFU (from the f32 accumulator), the first step's loads (each grid row
  // reads its lhs tile, then each column its rhs tile) and the last tiles'
  // stores, all cores at once.
  double accBytes =
      direct(tile) ? outBytes : double(tm * tn * 4 * (kt > 1 || accumulate ? 2 : 1));
  double pt = arch.ptCycles(double(tm), double(tk), double(tn), lhsBytes + rhsBytes, accBytes);
  double convert = staged() && !direct(tile) ? std::ceil(double(tm * tn) * double(arch.sfuFp32RateDivisor) /
                                        arch.sfuElementsPerCycle()) +
                                  double(arch.sfuStartupCycles)
                            : 0;
  double cores = double(grid.b * grid.m * grid.n);
  double firstLoad = std::max(double(grid.b * grid.m) * lhsBytes / bw, lhsBytes / port) +
                     std::max(double(grid.b * grid.n) * rhsBytes / bw, rhsBytes / port) +
                     2 * latency;
  // The last stores find no reads to share the bus with: when fewer bytes
  // are written than read they pay the read/write turnaround alone.
  double storeCost = 1 / bw + (written < read ? arch.turnaroundCyclesPerByte() : 0);
  double lastStore = std::max(cores * outBytes * storeCost, outBytes / port) + latency;
  // Whichever of the PT and the transfers is busiest sets the pace; the
  // transfers wait for the first tile to be computed before storing.
  double compute = firstLoad + steps * pt + convert + lastStore;
  double transfer = std::max(bus, own) + pt + convert;
  return std::max(compute, transfer);
}

MatmulPlan::Grid MatmulPlan::chooseGrid(int64_t cores, ArrayRef<int64_t> tile,
                                        double &time) const {
  int64_t mt = llvm::divideCeil(m, tile[0]), nt = llvm::divideCeil(n, tile[1]);
  Grid best;
  time = estimate(tile, best);
  for (int64_t gb = 1; gb <= std::min(batch, cores); ++gb)
    for (int64_t gm = 1; gm <= std::min(mt, cores / gb); ++gm)
      for (int64_t gn = 1; gn <= std::min(nt, cores / (gb * gm)); ++gn) {
        double t = estimate(tile, {gb, gm, gn});
        if (t < time) {
          best = {gb, gm, gn};
          time = t;
        }
      }
  return best;
}

SmallVector<int64_t> MatmulPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  // Among stick-multiple tiles that fit, the one whose best grid has the
  // least estimated time: larger output tiles read the operands fewer times
  // but leave cores idle when there are too few of them, and the PT is fed
  // better by some shapes than others.
  int64_t stick = arch.stickBytes / 2;
  auto sizes = [&](int64_t dim, int64_t limit) {
    SmallVector<int64_t> result;
    if (dim <= stick)
      return SmallVector<int64_t>{dim};
    for (int64_t t = stick; t <= std::min(dim, limit); t *= 2)
      result.push_back(t);
    if (dim <= limit)
      result.push_back(dim);
    return result;
  };
  SmallVector<int64_t> best;
  double bestTime = 0;
  for (int64_t tm : sizes(m, 16 * stick))
    for (int64_t tn : sizes(n, 16 * stick))
      for (int64_t tk : sizes(k, 16 * stick)) {
        int64_t total;
        assignLx(slots({tm, tn, tk}), arch.stickBytes, total);
        if (total > lxBytes)
          continue;
        double time;
        chooseGrid(cores, {tm, tn, tk}, time);
        if (best.empty() || time < bestTime) {
          best = {tm, tn, tk};
          bestTime = time;
        }
      }
  if (!best.empty())
    return best;
  // Nothing stick sized fits (huge element types or a tiny LX): shrink.
  for (int64_t t = std::min({m, n, k}); t >= 1; t /= 2) {
    int64_t total;
    assignLx(slots({t, t, t}), arch.stickBytes, total);
    if (total <= lxBytes)
      return {t, t, t};
  }
  return {};
}

LogicalResult MatmulPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                                ArrayRef<int64_t> lx) const {
  SmallVector<LxSlot> slotList = slots(tile);
  auto slotAt = [&](unsigned slot, int64_t copy) { return lx[slot] + copy * slotList[slot].bytes; };
  int64_t tm = tile[0], tn = tile[1], tk = tile[2];
  int64_t mt = llvm::divideCeil(m, tm), nt = llvm::divideCeil(n, tn), kt = llvm::divideCeil(k, tk);
  double time;
  Grid grid = chooseGrid(cores, tile, time);
  bool rows = walksRows(tile, grid);
  bool inOne = direct(tile);
  uint8_t accType = inOne ? out.dtype : uint8_t(ISA::DType::f32);
  int64_t accBytes = inOne ? esOf(out) : 4;
  Location loc = op->getLoc();

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
  // a grid column the same rhs panel, at the same step.
  for (int64_t core = 0; core < grid.b * grid.m * grid.n; ++core) {
    int64_t cb = core / (grid.m * grid.n), ci = core / grid.n % grid.m, cj = core % grid.n;
    int64_t bBegin = batch * cb / grid.b, bc = batch * (cb + 1) / grid.b - bBegin;
    int64_t mBegin = mt * ci / grid.m, mc = mt * (ci + 1) / grid.m - mBegin;
    int64_t nBegin = nt * cj / grid.n, nc = nt * (cj + 1) / grid.n - nBegin;
    auto stepAt = [&, bBegin, mBegin, nBegin, mc, nc](int64_t i) {
      int64_t local = i / kt, s = i % kt;
      int64_t mi = rows ? local % mc : local / nc % mc, ni = rows ? local / mc % nc : local % nc;
      int64_t b = bBegin + local / (mc * nc), m0 = (mBegin + mi) * tm, n0 = (nBegin + ni) * tn,
              k0 = s * tk;
      // The copy of each operand slot is that of its panel: a panel that
      // stays is loaded at its first tile only.
      int64_t lhsPanel = i, rhsPanel = i;
      if (kt == 1 && rows)
        rhsPanel = local / mc;
      else if (kt == 1)
        lhsPanel = local / nc;
      int64_t am = std::min(tm, m - m0), an = std::min(tn, n - n0), ak = std::min(tk, k - k0);
      bool first = s == 0, last = s == kt - 1;
      int64_t outCopy = local % 2;
      bool lhsNew = kt > 1 || rows || local % nc == 0, rhsNew = kt > 1 || !rows || local % mc == 0;
      Placed a = place(lhs, b, m0, k0, am, ak, tm, tk, slotAt(0, lhsPanel % 2));
      Placed w = place(rhs, b, k0, n0, ak, an, tk, tn, slotAt(1, rhsPanel % 2));
      RefAttr acc = em.lx(accType, slotAt(2, outCopy), {tn * accBytes, 0, 0});
      int64_t es = esOf(out);
      // The converted tile: in the acc slot unless accumulating needs staging.
      RefAttr stage = inOne || !staged()
                          ? acc
                          : em.lx(out.dtype, slotAt(staging() ? 3 : 2, outCopy), {tn * es, 0, 0});
      RefAttr device = em.device(out.value, out.dtype,
                                 (b * out.batchStride + m0 * out.outerStride + n0) * es,
                                 {out.outerStride * es, 0, 0});
      TileStep step;
      if (lhsNew)
        step.loads.push_back(a.load);
      if (rhsNew)
        step.loads.push_back(w.load);
      bool loadInit = accumulate && first;
      if (loadInit) // the output's current content starts the sum
        step.loads.push_back({stage, device, an * es, {am, 1, 1}});
      if (last)
        step.stores.push_back({device, stage, an * es, {am, 1, 1}});
      step.compute = [=, this, &em](StepCompute &sc) {
        OpBuilder &builder = sc.b();
        auto sfuView = [&](RefAttr r, int64_t e) {
          return em.lx(r.getDtype(), r.getOffset(), {tn * e, e, 0});
        };
        if (loadInit && staged())
          sc.add(HwUnaryOp::create(builder, loc, "copy", sfuView(acc, 4), sfuView(stage, es), am,
                                   an, nullptr, 0, nullptr, nullptr));
        sc.add(HwMatmulOp::create(builder, loc, acc, a.view, w.view, am, ak, an, lhs.transposed,
                                  rhs.transposed, !first || accumulate, nullptr, 0, nullptr,
                                  nullptr));
        if (last && staged() && !inOne)
          sc.add(HwUnaryOp::create(builder, loc, "copy", sfuView(stage, es), sfuView(acc, 4), am,
                                   an, nullptr, 0, nullptr, nullptr));
      };
      return step;
    };
    em.pipeline(core, loc, bc * mc * nc * kt, stepAt);
  }
  return success();
}

} // namespace

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeMatmulPlan(Operation *op,
                                                              const ::spyre::Arch &arch) {
  return analyzedPlan<MatmulPlan>(op, arch);
}
