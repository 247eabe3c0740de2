//===- GenericPlan.cpp - running a spyre.generic on the card --------------===//
//
// A tile of a generic is two-dimensional: `row` and `col` loops may have
// tiles larger than one, every other loop steps one point at a time. The
// vector unit reduces along cols, so `col` is a reduction loop when there is
// one. Tiles of parallel loops are shared among cores in contiguous runs;
// reduction tiles of one output tile run on one core, combined with the
// `accumulate` form of the ISA's reduce.
//
// An elementwise generic run alone may tile a third loop, its plane loop:
// the parallel loop whose planes continue the output's rows when the col
// loop's rows are shorter than a stick (the two halves of a rotary
// embedding's head, an upsampling's repeats). Its tiles span whole col rows
// and several planes; an operand whose planes continue its rows moves them
// as one run, and the body runs once per plane. Or, where whole tiles of
// rows x cols are a few sticks, the loop that continues the output past
// them (an image's rows of windows): each tile then holds several blocks,
// not one tiny transfer per operand.
//
//===----------------------------------------------------------------------===//

#include "GenericPlan.h"
#include "spyre-mlir/Dialect/Spyre/Analysis/CostModel.h"
#include "spyre-mlir/Isa/Isa.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

uint8_t GenericPlan::accType(const Output &out) const {
  switch (out.combiner) {
  case CombinerKind::none: return out.dtype;
  case CombinerKind::argmax: case CombinerKind::argmin: return uint8_t(ISA::DType::i32);
  case CombinerKind::any: case CombinerKind::all: return uint8_t(ISA::DType::u8);
  case CombinerKind::welford: return uint8_t(ISA::DType::f32);
  default:
    return out.dtype == uint8_t(ISA::DType::dl16) ? uint8_t(ISA::DType::f32) : out.dtype;
  }
}

LogicalResult GenericPlan::analyze() {
  for (auto [i, size] : llvm::enumerate(generic.getStaticDomain()))
    if (ShapedType::isDynamic(size))
      return generic.emitError() << "cannot run on the card: loop " << i
                                 << " has a dynamic size; tiling needs static sizes "
                                    "(specialise the kernel for the size)";
  sizes.assign(generic.getStaticDomain().begin(), generic.getStaticDomain().end());
  for (auto [i, size] : llvm::enumerate(sizes))
    if (size == 0)
      return generic.emitError() << "cannot run on the card: loop " << i << " is empty";
  reduction.assign(sizes.size(), false);
  for (unsigned i : generic.getReductionLoops())
    reduction[i] = true;
  if (!generic.getSymbols().empty())
    return generic.emitError() << "cannot run on the card: the generic has symbols "
                                  "(run-time offsets), which tiling does not handle yet";

  std::string why;
  for (auto [i, input] : llvm::enumerate(generic.getInputs())) {
    auto type = cast<BufferType>(input.getType());
    std::optional<LinearAccess> access = linearize(generic.getInputMap(i), type, why);
    if (!access)
      return generic.emitError() << "cannot run on the card: input " << i << ": " << why;
    inputs.push_back(*access);
    inputTypes.push_back(deviceDType(type.getElementType()));
  }
  SmallVector<CombinerKind> combiners = generic.getCombinerKinds();
  unsigned outIndex = 0;
  for (auto [value, kind] : llvm::enumerate(combiners))
    for (unsigned part = 0; part < GenericOp::getNumOutputsOf(kind); ++part, ++outIndex) {
      auto type = cast<BufferType>(generic.getOutputs()[outIndex].getType());
      std::optional<LinearAccess> access =
          linearize(generic.getOutputMap(outIndex), type, why);
      if (!access)
        return generic.emitError() << "cannot run on the card: output " << outIndex << ": "
                                   << why;
      outputs.push_back({*access, deviceDType(type.getElementType()), kind, unsigned(value),
                         part});
    }

  // `col`: the innermost reduction loop if there is one, else a group's
  // column loop for a member of one, else the loop the first output is
  // contiguous along (so stores move whole rows), else the last. `row`: the
  // parallel loop the first output is densest along.
  int64_t n = sizes.size();
  auto densest = [&](const LinearAccess &a, bool wantReduction, int skip) {
    int best = -1;
    for (int64_t i = n - 1; i >= 0; --i) {
      if (reduction[i] != wantReduction || i == skip || i == plane || sizes[i] == 1)
        continue;
      int64_t s = std::abs(a.strides[i]);
      if (s && (best < 0 || s < std::abs(a.strides[best])))
        best = int(i);
    }
    return best;
  };
  if (reduces()) {
    col = inputs.empty() ? -1 : densest(inputs[0], true, -1);
    if (col < 0)
      for (int64_t i = n - 1; i >= 0 && col < 0; --i)
        if (reduction[i])
          col = int(i);
  } else if (role == Role::member && groupCol >= 0 && groupCol < n && !reduction[groupCol] &&
             sizes[groupCol] > 1) {
    // A member runs on its group's row tiles: an output the rows run
    // along (a normalization written channel-first beside statistics per
    // position) is stored a run of the tile's rows per column.
    col = groupCol;
  } else {
    col = n ? densest(outputs[0].access, false, -1) : -1;
    if (col < 0)
      col = int(n) - 1;
    if (role == Role::alone)
      plane = choosePlane();
  }
  row = densest(outputs[0].access, false, col);
  if (n == 0)
    return generic.emitError() << "cannot run on the card: a generic without loops";

  int64_t reducedLoops = llvm::count_if(llvm::seq<int64_t>(0, n),
                                        [&](int64_t i) { return reduction[i] && sizes[i] > 1; });
  for (const Output &out : outputs) {
    if (out.combiner == CombinerKind::none) {
      for (int64_t i = 0; i < n; ++i)
        if (sizes[i] > 1 && out.access.strides[i] == 0)
          return generic.emitError() << "cannot run on the card: output writes the same "
                                        "element for every iteration of loop "
                                     << i;
    } else if ((out.combiner == CombinerKind::argmax || out.combiner == CombinerKind::argmin) &&
               reducedLoops > 1) {
      return generic.emitError() << "cannot run on the card: "
                                 << stringifyCombinerKind(out.combiner)
                                 << " over more than one loop";
    }
  }

  FailureOr<BodyPlan> planned = planBody(generic);
  if (failed(planned))
    return failure();
  body = std::move(*planned);
  runLeader.assign(inputs.size(), -1);
  runShift.assign(inputs.size(), 0);
  runExtra.assign(inputs.size(), 0);
  chooseRowLoop();
  if (role == Role::alone && plane < 0 && !reduces())
    blockPlane = (plane = chooseBlockPlane()) >= 0;
  shareRuns();
  return success();
}

void GenericPlan::shareRuns() {
  if (role == Role::epilogue || row < 0)
    return;
  // Inputs reading one buffer with one set of strides, by base: each
  // follows the lowest base within a stick below its own.
  SmallVector<unsigned> candidates;
  for (unsigned k = 0; k < inputs.size(); ++k) {
    const LinearAccess &a = inputs[k];
    int64_t es = deviceDTypeBytes(inputTypes[k]), lr = a.strides[row], lc = a.strides[col];
    // Layouts whose rows are runs (layoutTile's first two).
    bool runs = (lc == 1 || runsOverGaps(lr, lc, es, arch.stickBytes)) && lr >= 0;
    // Planes that run down the row (layoutPlanes' reversed run) read it
    // from its end: another input's run cannot extend it.
    if (plane >= 0 && lc == 1 && a.strides[plane] == -sizes[col])
      runs = false;
    if (runs && (role == Role::alone || isa<BlockArgument>(generic.getInputs()[k])))
      candidates.push_back(k);
  }
  llvm::stable_sort(candidates, [&](unsigned x, unsigned y) {
    return inputs[x].base < inputs[y].base;
  });
  // A follower may start past the leader's run (a pooling window's rows
  // below, read as strided slices of the rows above's run) as long as the
  // run, extended to cover it, skips at most a stick: one run per row
  // moves fewer sticks than one per input (ResNet's stem pool: three runs
  // of 113 elements per row, each a stick more than it spans).
  auto runLength = [&](const LinearAccess &a) {
    return (sizes[col] - 1) * std::abs(a.strides[col]) + 1;
  };
  for (auto [n, k] : llvm::enumerate(candidates)) {
    for (unsigned j : ArrayRef<unsigned>(candidates).take_front(n)) {
      int64_t shift = inputs[k].base - inputs[j].base;
      int64_t es = deviceDTypeBytes(inputTypes[k]);
      int64_t gap = shift - (runLength(inputs[j]) + runExtra[j]);
      if (runLeader[j] < 0 && generic.getInputs()[j] == generic.getInputs()[k] &&
          inputTypes[j] == inputTypes[k] && inputs[j].strides == inputs[k].strides &&
          shift > 0 && (shift * es <= arch.stickBytes || gap * es <= arch.stickBytes)) {
        runLeader[k] = int(j);
        runShift[k] = shift;
        runExtra[j] = std::max(runExtra[j], shift);
        break;
      }
    }
  }
}

void GenericPlan::chooseRowLoop() {
  // The densest row loop keeps transfers long, but when it is short (two
  // halves of a rotary embedding's head) every other loop steps one point
  // at a time and a core runs many tiny tiles, each paying the DMA latency
  // of every input. Another parallel loop is taken when its tiles need less
  // than half the steps per core.
  // Every pass that plans the op analyzes it: the common case, no other
  // candidate loop (a 2-D generic), costs no tile search.
  int densestRow = row;
  SmallVector<int> others;
  for (int64_t i = 0, e = sizes.size(); i < e; ++i)
    if (!reduction[i] && int(i) != col && int(i) != densestRow && int(i) != plane &&
        sizes[i] > 1)
      others.push_back(int(i));
  if (row < 0 || others.empty())
    return;
  // An operand whose runs go along the densest row (a channel-last max over
  // a few mask units, Hiera's) would move element by element along any
  // other: a stick per element costs more than any number of steps saves.
  auto runs = [&](const LinearAccess &a) { return runsAlongRows(a); }; // row: the densest
  if (llvm::any_of(inputs, runs) ||
      llvm::any_of(outputs, [&](const Output &out) { return runs(out.access); }))
    return;
  auto stepsPerCore = [&]() -> int64_t {
    SmallVector<int64_t> tile = chooseTile(arch.cores, arch.lxUsableBytes());
    if (tile.empty())
      return INT64_MAX;
    return llvm::divideCeil(parallelTiles(tile, -1), arch.cores);
  };
  int64_t best = stepsPerCore();
  for (int i : others) {
    int previous = row;
    row = i;
    int64_t steps = stepsPerCore();
    if (steps < best / 2)
      best = steps;
    else
      row = previous;
  }
}

LogicalResult GenericPlan::verifyTile(ArrayRef<int64_t> tile) const {
  if (tile.size() != sizes.size())
    return generic.emitError() << "spyre.tile has " << tile.size() << " sizes for "
                               << sizes.size() << " loops";
  for (auto [i, t] : llvm::enumerate(tile)) {
    if (t < 1 || t > sizes[i])
      return generic.emitError() << "spyre.tile size " << t << " of loop " << i
                                 << " is not in [1, " << sizes[i] << "]";
    if (t > 1 && int(i) != row && int(i) != col && int(i) != plane) {
      InFlightDiagnostic diag = generic.emitError()
                                << "spyre.tile: loop " << i
                                << " must step one point at a time (only loops " << row
                                << (plane >= 0 ? ", " : " and ") << col;
      if (plane >= 0)
        diag << " and the plane loop " << plane;
      return diag << " are tiled)";
    }
  }
  return success();
}

int GenericPlan::choosePlane() const {
  if (outputs.empty() || outputs[0].combiner != CombinerKind::none)
    return -1;
  const LinearAccess &out = outputs[0].access;
  if (out.strides[col] != 1)
    return -1;
  // Only beside a row loop: in a two-dimensional generic the rows already
  // continue each other's runs.
  int found = -1, rows = 0;
  for (int64_t i = 0, e = sizes.size(); i < e; ++i) {
    if (int(i) == col || reduction[i] || sizes[i] == 1)
      continue;
    if (found < 0 && out.strides[i] == sizes[col])
      found = int(i);
    else
      ++rows;
  }
  if (!rows || found < 0)
    return -1;
  // Rows of a stick or more move whole sticks anyway; their planes are
  // worth a tile only when an input reads them the other way round (a
  // rotary embedding's rotated halves of a 128-wide head): with all planes
  // in the tile it reads the run the straight input loads.
  if (sizes[col] * deviceDTypeBytes(outputs[0].dtype) >= arch.stickBytes &&
      !readsPlanesReversed(found))
    return -1;
  return found;
}

int GenericPlan::chooseBlockPlane() const {
  if (outputs.empty() || outputs[0].combiner != CombinerKind::none)
    return -1;
  const LinearAccess &out = outputs[0].access;
  if (out.strides[col] != 1)
    return -1;
  const int rows = row;
  if (rows < 0 || out.strides[rows] != sizes[col])
    return -1;
  // Only for blocks far shorter than a core's DMA engine moves in one
  // memory latency: every tile waits out that latency for each operand.
  int64_t block = sizes[rows] * sizes[col] * deviceDTypeBytes(outputs[0].dtype);
  if (4 * block > arch.dmaLatencyCycles * arch.dmaPortBytesPerCycle)
    return -1;
  // The loop that continues the output's blocks, or one that continues an
  // input's rows (layoutPlanes' block layout: Swin's window partition reads
  // a channel-first image whose rows the windows of a row of windows
  // continue, where the windows' own rows move 14 bytes a stick): whichever
  // moves the fewest sticks per point.
  int best = -1;
  double bestBytes = 0;
  for (int64_t i = 0, e = sizes.size(); i < e; ++i) {
    if (int(i) == rows || int(i) == col || reduction[i] || sizes[i] == 1)
      continue;
    bool continuesInput = llvm::any_of(inputs, [&](const LinearAccess &a) {
      return a.strides[rows] == 1 && a.strides[i] == sizes[rows];
    });
    if (out.strides[i] != sizes[rows] * sizes[col] && !continuesInput)
      continue;
    double bytes = blockPlaneBytes(int(i));
    if (best < 0 || bytes < bestBytes)
      best = int(i), bestBytes = bytes;
  }
  return best;
}

double GenericPlan::blockPlaneBytes(int loop) const {
  // Each operand moves runs of the elements its strides make contiguous
  // within the tile, every run whole sticks.
  const std::array<int, 3> tiled = {row, col, loop};
  const std::array<int64_t, 3> tileSizes = {sizes[row], sizes[col], sizes[loop]};
  auto moved = [&](const LinearAccess &a, uint8_t dtype) {
    std::array<int64_t, 3> strides;
    double elements = 1;
    for (auto [k, l] : llvm::enumerate(tiled)) {
      strides[k] = a.strides[l];
      elements *= strides[k] ? double(tileSizes[k]) : 1.0;
    }
    int64_t run = contiguousRun(strides, tileSizes);
    double runBytes = double(run * deviceDTypeBytes(dtype)), stick = double(arch.stickBytes);
    return elements / double(run) * std::ceil(runBytes / stick) * stick;
  };
  double bytes = 0;
  for (auto [k, a] : llvm::enumerate(inputs))
    bytes += moved(a, inputTypes[k]);
  for (const Output &out : outputs)
    bytes += moved(out.access, out.dtype);
  return bytes / double(sizes[row] * sizes[col] * sizes[loop]);
}

bool GenericPlan::readsPlanesReversed(int loop) const {
  return llvm::any_of(inputs, [&](const LinearAccess &a) {
    return a.strides[col] == 1 && a.strides[loop] == -sizes[col];
  });
}

PlanedLayout GenericPlan::layoutPlanes(const LinearAccess &a, int64_t es,
                                       ArrayRef<int64_t> tile, int64_t rows, int64_t cols,
                                       int64_t planes, int64_t span, int64_t extra) const {
  int64_t tr = rowSize(tile), tc = tile[col], tp = planeSize(tile);
  int64_t lr = row < 0 ? 0 : a.strides[row], lc = a.strides[col];
  int64_t lp = plane < 0 ? 0 : a.strides[plane];
  PlanedLayout l;
  if (tp > 1 && std::abs(lc) == 1 && tc == sizes[col] && std::abs(lp) == tc) {
    // One run of all planes per row; a plane is a stretch of it. Its
    // elements may run down the stretch (GPT-J's rotate_every_two swaps
    // each pair), read with a negative column stride from its last one.
    l.tile = layoutTile(lr, 1, tr, tp * tc, rows, planes * tc, es, span, extra);
    l.planeBytes = tc * es;
    l.colStride = lc * es;
    l.reversed = lp < 0;
    l.deviceShift = (l.reversed ? (planes - 1) * lp : 0) + (lc < 0 ? (tc - 1) * lc : 0);
    l.viewShift = lc < 0 ? (tc - 1) * es : 0;
    return l;
  }
  if (blockPlane && tp > 1 && lr == 1 && lp == tr && tr == sizes[row]) {
    // Rows that run along the device, which the planes continue (Swin's
    // channel-first input beside its windows' rows): one run of all planes'
    // rows per col, a plane a stretch of it. Plane by plane, each col's run
    // of a plane's few rows would cost a stick.
    l.tile = layoutTile(lr, lc, tp * tr, tc, planes * rows, cols, es, span);
    l.planeBytes = tr * l.tile.rowStride;
    l.colStride = l.tile.colStride;
    return l;
  }
  if (tp > 1 && lc == 0 && lp == 1) {
    l.tile = layoutTile(lr, 1, tr, tp, rows, planes, es, span);
    l.planeBytes = es;
    return l;
  }
  if (tp > 1 && runsAlongPlanes(a, plane) && extra == 0) {
    // Contiguous along the planes, not the cols (an output with a few heads
    // innermost computed from an input with the positions innermost:
    // Mamba2's chunked scan): a run of the planes per row and col, each
    // plane's view one element of it. Plane by plane, each element of the
    // input would cost a stick.
    int64_t r = lr ? tr : 1;
    l.tile.bytes = tc * r * tp * es;
    l.tile.rowStride = lr ? tp * es : 0;
    l.tile.colStride = r * tp * es;
    l.tile.rowBytes = planes * es;
    l.tile.counts = {lr ? rows : 1, cols, 1};
    l.tile.deviceStrides = {lr * es, lc * es, 0};
    l.tile.lxStrides = {tp * es, r * tp * es, 0};
    l.planeBytes = es;
    l.colStride = l.tile.colStride;
    return l;
  }
  int64_t run = (tc - 1) * std::abs(lc) + 1 + extra;
  if (tp > 1 && extra > 0 && lp > 0 && lp <= run &&
      (lc == 1 || runsOverGaps(lr, lc, es, span))) {
    // Runs extended over other inputs' (shareRuns) that reach the next
    // plane's (a pooling window's rows below, the next output row's rows):
    // one run of all planes per row, a plane's view lp elements on. Plane
    // by plane, the rows the planes share would move once per plane.
    l.tile = layoutTile(lr, lc, tr, tc, rows, cols, es, span, extra + (tp - 1) * lp);
    l.tile.rowBytes = ((cols - 1) * std::abs(lc) + 1 + extra + (planes - 1) * lp) * es;
    l.planeBytes = lp * es;
    l.colStride = l.tile.colStride;
    return l;
  }
  l.tile = layoutTile(lr, lc, tr, tc, rows, cols, es, span, extra);
  l.colStride = l.tile.colStride;
  if (lp == 0)
    return l; // every plane reads the same elements
  l.planeBytes = l.tile.bytes;
  l.tile.bytes *= tp;
  // Planes as the first unused dimension of the transfer.
  for (int k = 1; k < 3; ++k)
    if (l.tile.counts[k] == 1 && l.tile.deviceStrides[k] == 0) {
      l.tile.counts[k] = planes;
      l.tile.deviceStrides[k] = lp * es;
      l.tile.lxStrides[k] = l.planeBytes;
      return l;
    }
  llvm_unreachable("a layout uses at most two transfer dimensions");
}

SmallVector<LxSlot> GenericPlan::slots(ArrayRef<int64_t> tile) const {
  SmallVector<LxSlot> result;
  int64_t tr = rowSize(tile), tc = tile[col], tp = planeSize(tile);
  for (auto [i, access] : llvm::enumerate(inputs)) {
    int64_t es = deviceDTypeBytes(inputTypes[i]);
    PlanedLayout l = layoutPlanes(access, es, tile, tr, tc, tp, arch.stickBytes, runExtra[i]);
    // A follower's slot stays empty: it reads its leader's.
    int64_t bytes = runLeader[i] >= 0 ? 0 : l.tile.bytes;
    result.push_back({"input" + std::to_string(i), bytes, isResident(i, tile) ? 1 : 2});
  }
  for (auto [i, out] : llvm::enumerate(outputs)) {
    std::string name = "output" + std::to_string(i);
    if (out.combiner == CombinerKind::none) {
      int64_t es = deviceDTypeBytes(out.dtype);
      PlanedLayout l = layoutPlanes(out.access, es, tile, tr, tc, tp, outputSpan(out));
      result.push_back({name, l.tile.bytes, 2});
      continue;
    }
    result.push_back({name + ".acc", tr * deviceDTypeBytes(accType(out)), 2});
    if (out.combiner == CombinerKind::argmax || out.combiner == CombinerKind::argmin)
      result.push_back({name + ".best", tr * 4, 2});
    if (needsStaging(out))
      result.push_back({name + ".staging", tr * deviceDTypeBytes(out.dtype), 2});
  }
  for (auto [i, temp] : llvm::enumerate(body.temps))
    result.push_back({"temp" + std::to_string(i), tr * tc * deviceDTypeBytes(temp.dtype), 1,
                      temp.begin, temp.end});
  return result;
}

bool GenericPlan::isResident(unsigned k, ArrayRef<int64_t> tile) const {
  // Along a stride of zero, layoutTile moves one element whatever the tile's
  // extent, so a ragged last tile loads the same bytes too.
  for (int64_t d = 0, e = sizes.size(); d < e; ++d)
    if (llvm::divideCeil(sizes[d], tile[d]) > 1 && inputs[k].strides[d] != 0)
      return false;
  return true;
}

int64_t GenericPlan::parallelTiles(ArrayRef<int64_t> tile, int skip) const {
  int64_t count = 1;
  for (int64_t i = 0, e = sizes.size(); i < e; ++i)
    if (!reduction[i] && i != skip)
      count *= llvm::divideCeil(sizes[i], tile[i]);
  return count;
}

SmallVector<int64_t> GenericPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  double sfu = sfuCycles(cores);
  // Two tiles also let one's store flow beside the other's load where the
  // card's DMA engines move both at once: half of the lesser direction's
  // bus time (a 1024 x 1024 transpose on 32 cores: 43.9 -> 41.5 us).
  auto [read, write] = deviceBytes(sizes);
  double beside = arch.dmaDuplex ? std::min(read, write) / arch.deviceBytesPerCycle() : 0;
  // A generic that loads nothing (a mask or a bias built from indices:
  // BLOOM's ALiBi bias and causal mask, 4 MB at 512 tokens) has only its
  // stores to overlap its SFU work with, and no loads to wait out: four
  // tiles a core where they pay, as for row groups.
  int64_t depth = overlapDepth(sfu + beside, transfersPerTile(), arch, inputs.empty() ? 4 : 2);
  SmallVector<int64_t> plain = tileWithRowGranule(cores, depth, lxBytes, 1);
  int64_t granule = row >= 0 ? rowStickElems() : 1;
  if (granule == 1 || plain.empty())
    return plain;
  // Whole-stick rows when they give as many cores a tile as the plain
  // tiles do. When they give fewer (a tensor too small to give every core a
  // whole stick, a column reduction of a narrow tensor, whose reduced loop
  // stays on one core), fewer cores reading unpadded rows may still beat
  // every core reading padded ones: 8192 x 1024
  // summed over its rows moved four times its bytes on 32 cores in tiles of
  // 16 columns. Only a clear win (a fifth less) counts: the estimate
  // overlaps what a core with one tile runs in turn (load, SFU, store), and
  // larger tiles on fewer cores lost 1.4 us on a key-cache update whose
  // padded rows were a 2 KB vector of positions (its estimate was 0.1%
  // better).
  SmallVector<int64_t> whole = tileWithRowGranule(cores, depth, lxBytes, granule);
  if (!whole.empty() &&
      (parallelTiles(whole, -1) >= std::min(cores, parallelTiles(plain, -1)) ||
       5 * tileCycles(whole, cores, sfu) <= 4 * tileCycles(plain, cores, sfu)))
    return whole;
  return plain;
}

std::pair<double, double> GenericPlan::deviceBytes(ArrayRef<int64_t> tile) const {
  // Bytes the device moves for an operand: rows running along the row loop
  // move whole sticks of `tile[row]` elements each.
  auto moved = [&](const LinearAccess &a, uint8_t dtype, bool input) {
    double elements = 1;
    for (auto [size, stride] : llvm::zip(sizes, a.strides))
      elements *= stride ? double(size) : 1.0;
    double es = double(deviceDTypeBytes(dtype)), bytes = elements * es;
    double stick = double(arch.stickBytes);
    if (planeSize(tile) > 1 && runsAlongPlanes(a, plane)) {
      double runBytes = double(planeSize(tile)) * es;
      return bytes * std::ceil(runBytes / stick) * stick / runBytes;
    }
    if (!runsAlongRows(a))
      return bytes;
    // Columns of a few elements move as one run, gaps and all (layoutTile).
    int64_t lc = std::abs(a.strides[col]);
    if (input && narrowColumnsRun(a.strides[row], lc, tile[row], int64_t(es), arch.stickBytes))
      return bytes * double(lc) / double(tile[row]);
    double rowBytes = double(tile[row]) * es;
    return bytes * std::ceil(rowBytes / stick) * stick / rowBytes;
  };
  double read = 0, write = 0;
  for (auto [i, access] : llvm::enumerate(inputs))
    read += moved(access, inputTypes[i], true);
  for (const Output &out : outputs) {
    double bytes = moved(out.access, out.dtype, false);
    if (rewritesRuns(out)) { // the runs over the gaps, loaded and stored
      bytes *= double(out.access.strides[col]);
      read += bytes;
    }
    write += bytes;
  }
  return {read, write};
}

double GenericPlan::tileCycles(ArrayRef<int64_t> tile, int64_t cores, double sfu) const {
  int64_t used = std::max<int64_t>(1, std::min(cores, parallelTiles(tile, -1)));
  auto [read, write] = deviceBytes(tile);
  double bus = arch.deviceCycles(read, write);
  double port = (read + write) / double(used * arch.dmaPortBytesPerCycle);
  return std::max({bus, port, sfu * double(cores) / double(used)});
}

bool GenericPlan::leavesGaps(const Output &out) const {
  const LinearAccess &a = out.access;
  return out.combiner == CombinerKind::none &&
         runsOverGaps(row < 0 ? 0 : a.strides[row], a.strides[col],
                      deviceDTypeBytes(out.dtype), arch.stickBytes);
}

bool GenericPlan::rewritesRuns(const Output &out) const {
  if (role != Role::alone || !leavesGaps(out))
    return false;
  const LinearAccess &a = out.access;
  int64_t lc = a.strides[col];
  // Runs of distinct tiles do not overlap when every other loop's step
  // clears all that the loops of smaller strides reach.
  SmallVector<std::pair<int64_t, int64_t>> others; // |stride|, size
  for (int64_t d = 0, e = sizes.size(); d < e; ++d)
    if (d != col && sizes[d] > 1)
      others.push_back({std::abs(a.strides[d]), sizes[d]});
  llvm::sort(others);
  int64_t reach = (sizes[col] - 1) * lc + 1;
  for (auto [stride, size] : others) {
    if (stride < reach)
      return false;
    reach += stride * (size - 1);
  }
  return true;
}

bool GenericPlan::runsAlongRows(const LinearAccess &a) const {
  return row >= 0 && std::abs(a.strides[row]) == 1 && std::abs(a.strides[col]) != 1;
}

bool GenericPlan::runsAlongPlanes(const LinearAccess &a, int loop) const {
  return loop >= 0 && a.strides[loop] == 1 && a.strides[col] != 0 &&
         std::abs(a.strides[col]) != 1;
}

SmallVector<int64_t> GenericPlan::tileWithRowGranule(int64_t cores, int64_t depth,
                                                     int64_t lxBytes, int64_t granule) const {
  int64_t n = sizes.size();
  SmallVector<int64_t> tile(n, 1);
  if (row >= 0)
    tile[row] = granule; // the smallest row tile the cols must fit beside
  // The largest size of `loop` up to `limit`, in multiples of `step`,
  // with which the tile fits LX.
  auto largest = [&](int loop, int64_t limit, int64_t step) {
    return largestFitting(limit, step, [&](int64_t size) {
      SmallVector<int64_t> t = tile;
      t[loop] = size;
      return fitsBytes(t) <= lxBytes;
    });
  };
  int64_t stickElems = arch.stickBytes / 2;
  if (blockPlane) {
    // Whole rows x cols, and as many planes as leave every core its tiles.
    tile[col] = sizes[col];
    tile[row] = sizes[row];
    int64_t pieces =
        std::max<int64_t>(1, llvm::divideCeil(cores * depth, parallelTiles(tile, plane)));
    tile[plane] = largest(plane, llvm::divideCeil(sizes[plane], pieces), 1);
    if (tile[plane] == 0)
      return {};
    return tile;
  }
  if (plane >= 0) {
    // Whole col rows, and planes enough for a stick when they fit.
    tile[col] = sizes[col];
    int64_t rowBytes = sizes[col] * deviceDTypeBytes(outputs[0].dtype);
    // All planes where an input runs along them (layoutPlanes: each plane
    // is then one element of the input's runs, which are that long).
    bool inputRuns = llvm::any_of(inputs, [&](const LinearAccess &a) {
      return runsAlongPlanes(a, plane);
    });
    int64_t wanted = readsPlanesReversed(plane) || inputRuns
                         ? sizes[plane]
                         : std::min<int64_t>(sizes[plane],
                                             llvm::divideCeil(arch.stickBytes, rowBytes));
    tile[plane] = largest(plane, wanted, 1);
    if (tile[plane] == 0)
      return {};
  } else {
    // Cols: whole rows when they fit; a parallel col loop is also split when
    // the other loops give too few tiles for every core.
    int64_t colLimit = sizes[col];
    if (!reduction[col] && row < 0) {
      int64_t others = parallelTiles(tile, col);
      int64_t pieces = std::max<int64_t>(1, llvm::divideCeil(cores * depth, others));
      colLimit = std::min<int64_t>(
          sizes[col], llvm::alignTo(llvm::divideCeil(sizes[col], pieces), stickElems));
    }
    tile[col] = largest(col, colLimit, stickElems);
    if (tile[col] == 0)
      return {};
  }
  if (row < 0)
    return tile;
  int64_t others = parallelTiles(tile, row);
  int64_t pieces = std::max<int64_t>(1, llvm::divideCeil(cores * depth, others));
  int64_t rowLimit = std::min<int64_t>(
      sizes[row], llvm::alignTo(llvm::divideCeil(sizes[row], pieces), granule));
  tile[row] = largest(row, rowLimit, granule);
  if (tile[row] == 0)
    return {};
  // Rows rounded up to whole sticks may leave cores without a tile, or
  // without the `depth` tiles that overlap one's transfers with another's:
  // split the cols too, into pieces of one size (the widest that fit LX
  // left a 4096-column transpose in tiles of 3072 and 1024 columns, one per
  // core: 178.6 us against 161.5 in two tiles of 1024 per core). So do too
  // few rows, when a tile's vector work outlasts the transfer latencies
  // more tiles would pay: two rows of 32,000 scores ran on two cores, and
  // two rows of 2048 stay whole (tile-row-loop.mlir).
  int64_t tiles = parallelTiles(tile, -1);
  bool longRows = granule == 1 && sfuCycles(1) / double(std::max<int64_t>(tiles, 1)) >
                                      double(4 * arch.dmaLatencyCycles);
  if ((granule > 1 || longRows) && tiles < cores * depth && !reduction[col] && plane < 0) {
    int64_t colPieces = std::max(llvm::divideCeil(cores * depth, parallelTiles(tile, col)),
                                 llvm::divideCeil(sizes[col], tile[col]));
    tile[col] = std::min<int64_t>(
        tile[col], llvm::alignTo(llvm::divideCeil(sizes[col], colPieces), stickElems));
  }
  return tile;
}

double GenericPlan::sfuCycles(int64_t cores) const {
  // Every body op at the rate of an instruction streaming all of the
  // generic's operands: more than most stream (CostModel's roofline counts
  // what each does, a lower bound), but the tile counts of overlapDepth
  // were set against this estimate.
  double points = 1;
  for (int64_t size : generic.getStaticDomain()) {
    if (ShapedType::isDynamic(size))
      return 0;
    points *= double(size);
  }
  double bytes = 0;
  for (Type t : generic->getOperandTypes())
    if (auto b = dyn_cast<BufferType>(t))
      bytes += double(b.getElementType().getIntOrFloatBitWidth()) / 8;
  double perPoint = 0;
  for (Operation &inner : generic.getBody().front().without_terminator())
    perPoint += sfuPasses(inner, arch);
  bool reduction = !generic.getReductionLoops().empty();
  if (!reduction)
    perPoint = std::max(perPoint, 1.0);
  return points *
         (perPoint / arch.sfuRate(bytes, false, false) +
          (reduction ? 1 / arch.sfuRate(bytes, true, false) : 0)) /
         double(std::max<int64_t>(cores, 1));
}

int64_t GenericPlan::rowStickElems() const {
  // An operand whose rows run along the row loop (a transpose's input or
  // output) moves row-tile-many elements per device row: anything short of
  // whole sticks is padded to them, so the device moves bytes for nothing.
  // An input of narrow columns (unit row stride, its rows all within a
  // stick) moves as one run whatever the tile's rows (layoutTile): tiles
  // of all its rows read it once, fewer would read the gaps again.
  // A per-row vector (no col stride: a LayerNorm's weight when the rows
  // are channels) is one run of the tile's rows whatever their count.
  int64_t align = 1;
  for (auto [i, access] : llvm::enumerate(inputs)) {
    if (!runsAlongRows(access) || access.strides[col] == 0)
      continue;
    int64_t es = deviceDTypeBytes(inputTypes[i]), lc = std::abs(access.strides[col]);
    if (narrowColumnsRun(access.strides[row], lc, sizes[row], es, arch.stickBytes))
      align = std::max(align, sizes[row]);
    else
      align = std::max(align, arch.stickBytes / es);
  }
  for (const Output &out : outputs)
    if (out.combiner == CombinerKind::none && runsAlongRows(out.access))
      align = std::max(align, arch.stickBytes / deviceDTypeBytes(out.dtype));
  return align <= sizes[row] ? align : 1;
}

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeGenericPlan(GenericOp op,
                                                               const ::spyre::Arch &arch) {
  return analyzedPlan<GenericPlan>(op, arch, GenericPlan::Role::alone);
}

int64_t GenericPlan::parallelUnits() const {
  int64_t units = 1;
  for (auto [size, red] : llvm::zip(sizes, reduction))
    units *= red ? 1 : size;
  return units;
}
