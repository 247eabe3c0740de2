//===- AttentionPlan.cpp - running spyre.attention on the card ------------===//
//
// A unit of work is one head's panel of query rows; units go to cores
// longest first (causal panels further down see more keys), each to the
// least loaded core. A folded panel (a fourth tile size of 1, causal heads
// with keys and values of their own) is two runs of rows from the two ends
// of a head, so that panels see about as many keys when there are about as
// few panels as cores. A core keeps its panel's queries, running row maxima
// and f32 output accumulator in LX, and streams blocks of keys and values
// through double-buffered slots. Per key block, each block of the panel's
// rows has its scores computed on the PT, turned into probabilities by an
// online softmax on the SFU (the new running maximum rescales what was
// accumulated before), and multiplied with the values on the PT, which also
// sums the probabilities (a column of ones after the values). The PT and the
// SFU work on different blocks at once. Scores and probabilities never leave
// LX; keys past a causal block's last row are never loaded.
//
//===----------------------------------------------------------------------===//

#include "PlanKinds.h"
#include "HwEmitter.h"
#include "spyre-mlir/Isa/Isa.h"

#include <limits>

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

namespace {

/// The LX slots, in the order of `spyre.lx`.
enum Slot : unsigned { kQ, kK, kV, kMask, kScores, kProbs, kCausal, kAcc, kOut, kRows };

/// Per-row f32 vectors inside the `rows` slot, each a panel's rows long,
/// then three constant cells (-inf, 0, 1) that selects read with zero
/// strides.
enum RowVec : int64_t { kMax, kOldMax, kSafeMax, kScale, kIsZero, kSafeSum, kNumRowVecs };

/// A block of a panel's query rows and the keys of a step's block it sees:
/// (first row in the panel, rows, keys).
struct Item {
  int64_t r0, rows, keys;
};

/// What a step costs beyond its keys, in keys (the SFU's and PT's start-up
/// and the per-row updates), for sharing units among cores.
constexpr int64_t kStepOverheadKeys = 16;

/// What a panel's steps cost (AttentionPlan::estimate).
struct UnitCycles {
  double steps = 0, firstOnCore = 0;
};

class AttentionPlan : public OpPlan {
public:
  AttentionPlan(AttentionOp op, const ::spyre::Arch &arch) : OpPlan(op, arch), attn(op) {}
  LogicalResult analyze();

  SPYRE_OPPLAN_OVERRIDES

  SmallVector<SmallVector<int64_t>> tileCandidates(int64_t cores, int64_t lxBytes,
                                                   int64_t count) const override;

private:
  /// A head's panel of query rows: its first row, rows, key blocks and the
  /// work `assign` balances (the keys it multiplies plus a per-step overhead).
  /// A folded panel is two runs of rows, the first `split` rows from q0 and
  /// the rest from q1 (tileFolds).
  struct Unit {
    int64_t head, q0, rows, blocks, work;
    int64_t split = rows, q1 = 0;
    /// The query row of the panel's row r.
    int64_t at(int64_t r) const { return r < split ? q0 + r : q1 + (r - split); }
    /// One past the panel's last query row.
    int64_t end() const { return at(rows - 1) + 1; }
  };
  SmallVector<Unit> unitsOf(int64_t panel, int64_t tk, bool fold) const;
  /// Whether `tile` folds causal panels: each core's panel is a run of rows
  /// near the start of a head and one near its end, so that every panel
  /// sees about as many keys (8 heads x 512 rows on 32 cores: as panels of
  /// 128 rows, the eight cores with a head's last rows worked 1.6x the
  /// average, and the others waited).
  static bool tileFolds(ArrayRef<int64_t> tile) { return tile.size() > 3 && tile[3] != 0; }
  bool canFold(int64_t panel, int64_t block) const;
  /// The units of each core: longest first, each to the least loaded core
  /// (causal panels further down see more keys); a core runs its units in
  /// order, from one that depends on its key/value head.
  SmallVector<SmallVector<int64_t>> assign(ArrayRef<Unit> units, int64_t cores) const;
  /// Key blocks of a panel whose last query row is end - 1.
  int64_t keyBlocks(int64_t end, int64_t tk) const;
  bool fits(ArrayRef<int64_t> tile, int64_t lxBytes) const;
  /// Estimated cycles of the busiest core with `tile` (see rankTiles).
  double estimate(ArrayRef<int64_t> tile, int64_t cores) const;
  /// The tiles that fit `lxBytes`, fastest first by estimate.
  SmallVector<std::pair<double, SmallVector<int64_t>>> rankTiles(int64_t cores,
                                                                 int64_t lxBytes) const;

  mutable AttentionOp attn;
  int64_t heads = 0, lq = 0, d = 0, kvHeads = 0, lk = 0, dv = 0;
  /// Where q, k and v's heads and rows are (AttentionOp::View).
  AttentionOp::View qView, kView, vView;
  int64_t maskBatch = 0, maskRows = 0;
  /// Heads per batch of a rank-4 target (its rows hold their heads), else 0.
  int64_t outHeads = 0;
  uint8_t dtype = 0, maskDtype = 0;
  int64_t es = 0, maskEs = 0;
  bool causal = false, hasMask = false;
  double scale = 1;
};

LogicalResult AttentionPlan::analyze() {
  if (failed(checkStaticRowMajor(attn)))
    return failure();
  qView = attn.getView(0), kView = attn.getView(1), vView = attn.getView(2);
  heads = qView.shape[0], lq = qView.shape[1], d = qView.shape[2];
  kvHeads = kView.shape[0], lk = kView.shape[1], dv = vView.shape[2];
  if (heads == 0 || lq == 0 || dv == 0)
    return attn.emitError() << "cannot run on the card: an empty attention";
  if (lk == 0 || d == 0)
    return attn.emitError() << "cannot run on the card: attention over no keys (or a head "
                               "size of 0) is a fill, not a product";
  dtype = deviceDType(cast<BufferType>(attn.getQuery().getType()).getElementType());
  es = deviceDTypeBytes(dtype);
  if (Value mask = attn.getMask()) {
    auto m = cast<BufferType>(mask.getType());
    hasMask = true;
    maskBatch = m.getDimSize(0), maskRows = m.getDimSize(1);
    maskDtype = deviceDType(m.getElementType());
    maskEs = deviceDTypeBytes(maskDtype);
  }
  causal = attn.getCausal();
  scale = attn.getScale().convertToDouble();
  auto out = cast<BufferType>(attn.getTarget().getType());
  if (out.getRank() == 4)
    outHeads = out.getDimSize(2);
  return success();
}

int64_t AttentionPlan::parallelUnits() const { return heads * lq; }

int64_t AttentionPlan::keyBlocks(int64_t end, int64_t tk) const {
  int64_t all = llvm::divideCeil(lk, tk);
  if (!causal)
    return all;
  return std::min(all, (end - 1) / tk + 1);
}

bool AttentionPlan::canFold(int64_t panel, int64_t block) const {
  // A block of rows never spans the two runs; a mask of rows would need
  // two loads of its own. Not for grouped heads: a group's query heads
  // read each key/value block in the same cycles, so panels half as long
  // balance the cores at no more traffic, where folding loads more queries
  // first and stores a whole panel last (the Llama layer's 8 heads on 2
  // key/value heads: 28.0 us in panels of 64 rows, 31.4 folded, 29.0 before
  // this estimate). With a key/value head per query head, panels half as
  // long read each key/value block twice as often.
  return causal && kvHeads == heads && !(hasMask && maskRows > 1) && panel % 2 == 0 &&
         (panel / 2) % block == 0 && panel / 2 < lq;
}

LogicalResult AttentionPlan::verifyTile(ArrayRef<int64_t> tile) const {
  if (tile.size() < 3 || tile.size() > 4 || tile[0] < 1 || tile[0] > lq || tile[1] < 1 ||
      tile[1] > lk || tile[2] < 1 || tile[2] > tile[0] ||
      (tile.size() == 4 && tile[3] != 0 && tile[3] != 1))
    return attn.emitError() << "spyre.tile of this attention is [query rows of a panel in [1, "
                            << lq << "], keys in [1, " << lk
                            << "], query rows of a block in [1, the panel's]] and optionally 1 "
                               "to fold causal panels";
  if (tileFolds(tile) && !canFold(tile[0], tile[2]))
    return attn.emitError() << "spyre.tile folds panels of " << tile[0] << " rows in blocks of "
                            << tile[2] << ": folding needs causal attention with a key/value head "
                               "per query head and without a mask of rows, an even panel "
                               "shorter than twice the queries, and blocks that divide half of "
                               "it";
  return success();
}

SmallVector<LxSlot> AttentionPlan::slots(ArrayRef<int64_t> tile) const {
  int64_t panel = tile[0], tk = tile[1], block = tile[2];
  int64_t probEs = deviceDTypeBytes(uint8_t(ISA::DType::dl16));
  return {{"query", panel * d * es, 2},
          {"key", tk * d * es, 2},
          {"value", tk * (dv + 1) * es, 2},
          {"mask", hasMask ? (maskRows == 1 ? 1 : panel) * tk * maskEs : 0, 2},
          {"scores", block * tk * 4, 2},
          {"probabilities", block * tk * probEs, 2},
          {"causal", causal ? block * block * 4 : 0, 1},
          {"accumulator", panel * (dv + 1) * 4, 1},
          {"output", panel * dv * es, 2},
          {"rows", (kNumRowVecs * panel + 3) * 4, 1}};
}

bool AttentionPlan::fits(ArrayRef<int64_t> tile, int64_t lxBytes) const {
  int64_t total;
  assignLx(slots(tile), arch.stickBytes, total);
  return total <= lxBytes;
}

SmallVector<AttentionPlan::Unit> AttentionPlan::unitsOf(int64_t panel, int64_t tk,
                                                       bool fold) const {
  SmallVector<Unit> units;
  // Folded: runs of half a panel, the first with the last, the second with
  // the one before it, ...; an odd middle run alone.
  const int64_t run = fold ? panel / 2 : panel, runs = llvm::divideCeil(lq, run);
  auto rowsAt = [&](int64_t p) { return std::min(run, lq - p * run); };
  auto seen = [&](int64_t end) { return causal ? std::min(lk, end) : lk; };
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t p = 0; p < (fold ? (runs + 1) / 2 : runs); ++p) {
      int64_t q0 = p * run, rows = rowsAt(p), last = runs - 1 - p;
      Unit unit{h, q0, rows, 0, seen(q0 + rows) * rows};
      if (fold && last != p) {
        unit.q1 = last * run;
        unit.rows += rowsAt(last);
        unit.work += seen(unit.q1 + rowsAt(last)) * rowsAt(last);
      }
      unit.blocks = keyBlocks(unit.end(), tk);
      unit.work += unit.blocks * kStepOverheadKeys * unit.rows;
      units.push_back(unit);
    }
  return units;
}

SmallVector<SmallVector<int64_t>> AttentionPlan::assign(ArrayRef<Unit> units, int64_t cores) const {
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, units.size()));
  llvm::stable_sort(order, [&](int64_t a, int64_t b) { return units[a].work > units[b].work; });
  SmallVector<int64_t> load(cores, 0);
  SmallVector<SmallVector<int64_t>> unitsOfCore(cores);
  for (int64_t u : order) {
    int64_t core = std::min_element(load.begin(), load.end()) - load.begin();
    load[core] += units[u].work;
    unitsOfCore[core].push_back(u);
  }
  // Each core runs its units in order, starting at a unit that depends on
  // its key/value head: causal panels differ in length, so cores of
  // different heads change units at different times rather than all
  // loading queries and storing outputs at once (32 x 2048 x 128: 1265.1
  // -> 1239.1 us), while the query heads of a group keep loading their
  // keys and values in the same cycles. Not with a mask of rows, which all
  // heads read: their cores read its rows once only when they run the same
  // panel at once (the 1B Llama's masked prefill attention: 101.3 us in
  // order, 106.9 staggered).
  for (SmallVector<int64_t> &list : unitsOfCore) {
    llvm::sort(list);
    if (!list.empty() && !(hasMask && maskRows > 1)) {
      size_t start = size_t(units[list.front()].head / (heads / kvHeads)) % list.size();
      std::rotate(list.begin(), list.begin() + start, list.end());
    }
  }
  return unitsOfCore;
}

double AttentionPlan::estimate(ArrayRef<int64_t> tile, int64_t cores) const {
  const int64_t panel = tile[0], tk = tile[1], block = tile[2];
  const double probEs = double(deviceDTypeBytes(uint8_t(ISA::DType::dl16)));
  const double startup = double(arch.sfuStartupCycles), latency = double(arch.dmaLatencyCycles);
  SmallVector<Unit> units = unitsOf(panel, tk, tileFolds(tile));
  // Bus cycles per byte that every working core moves at once. The query
  // heads of a group (grouped-query attention) are units of equal work that
  // run side by side, loading the same key/value blocks in the same cycles:
  // the card reads those once for the group. So do the panels of a head
  // when every unit has a core of its own (a decode step's few rows split
  // over the cores).
  const double active = double(std::min<int64_t>(cores, int64_t(units.size())));
  const double sharing = active / arch.deviceBytesPerCycle();
  const int64_t panelsPerHead = int64_t(units.size()) <= cores ? llvm::divideCeil(lq, panel) : 1;
  const double keySharing =
      std::max(1.0, active / double(heads / kvHeads * panelsPerHead)) / arch.deviceBytesPerCycle();
  // A block on a causal diagonal is loaded only up to the panel's last row,
  // which differs from panel to panel: only a group's query heads read it
  // at once.
  const double diagonalSharing =
      std::max(1.0, active / double(heads / kvHeads)) / arch.deviceBytesPerCycle();
  // Cycles of one unit: per step, the PT's products and the SFU's online
  // softmax, overlapped where the panel has two blocks or more (one block's
  // softmax while the other's products run); the keys and values a step
  // loads, through the core's DMA port or, where longer, the bus's time for
  // every working core's loads, after the memory's latency. A step's loads
  // run during the step before (double-buffered slots), but for the steps
  // that wait for theirs (unitCycles).
  auto unitCycles = [&](const Unit &unit) {
    // The unit's steps with each one's loads during the step before, and
    // what its first step costs more where it is the core's first (a later
    // unit's first keys and values arrive during the unit before).
    UnitCycles cycles;
    for (int64_t blk = 0; blk < unit.blocks; ++blk) {
      int64_t k0 = blk * tk, keys = std::min(tk, lk - k0);
      if (causal)
        keys = std::min(keys, unit.end() - k0);
      double pt = 0, sfu = 0, first = 0;
      int64_t items = 0;
      for (int64_t r0 = 0; r0 < unit.rows; r0 += block) {
        double r = double(std::min(block, unit.rows - r0));
        double c = double(causal ? std::min(keys, unit.at(r0 + int64_t(r) - 1) + 1 - k0) : keys);
        if (c <= 0)
          continue;
        double scores = arch.ptCycles(r, double(d), c, (r + c) * double(d * es), r * c * 4);
        double values = arch.ptCycles(r, c, double(dv + 1), r * c * probEs + c * double((dv + 1) * es),
                                      2 * r * double(dv + 1) * 4);
        // Maximum, subtraction and exponential over the scores, the
        // rescaled accumulator (after the first block), and the per-row
        // updates.
        double softmax = arch.sfuCycles(r * c, 4, true, false) +
                         arch.sfuCycles(r * c, 8, false, false) +
                         arch.sfuCycles(r * c, 4 + probEs, false, true) + 12 * startup;
        if (blk > 0)
          softmax += arch.sfuCycles(r * double(dv + 1), 8, false, false);
        if (hasMask)
          softmax += arch.sfuCycles(r * c, 8, false, false);
        // The causal select, over the columns a row of a block on the
        // diagonal can mask.
        double from = std::max<double>(0, double(unit.at(r0) - k0 + 1));
        if (causal && from < c)
          softmax += arch.sfuCycles(r * (c - from), 8, false, false);
        if (items++ == 0)
          first = std::min(scores, softmax);
        pt += scores + values;
        sfu += softmax;
      }
      double compute = items >= 2 ? std::max(pt, sfu) + first : pt + sfu;
      // The keys, the values and the mask are transfers one after the
      // other on the core's DMA engine, each after the memory's latency.
      // Keys in one run where their rows follow one another on the device
      // (else a stick or more a row); values row by row, into rows one
      // element longer: a row shorter than a stick moves a whole one (a
      // 32-wide f16 head's values cost twice their bytes).
      auto rowsBytes = [&](int64_t rowBytes, bool oneRun) {
        return double(keys) * double(oneRun ? rowBytes : llvm::alignTo(rowBytes, arch.stickBytes));
      };
      double bytes = rowsBytes(d * es, kView.rowStride == d) + rowsBytes(dv * es, false);
      double transfers = hasMask ? 3 : 2;
      double shared = keys == std::min(tk, lk - k0) ? keySharing : diagonalSharing;
      double loads = std::max(bytes / double(arch.dmaPortBytesPerCycle), bytes * shared) +
                     transfers * latency;
      // With a mask, measured: a unit's first loads wait in every unit
      // (the masked causal 32 x 256 x 258 attention of
      // test_causal_mask_runs_causal_on_the_card: 56.1 us in the tile an
      // estimate that hides them chooses, 43.8 in the one it chooses
      // charging them); without, only the core's first unit waits (GPT-2's
      // 12 x 512 x 64: 46.8 against 53.6).
      if (hasMask && blk == 0)
        cycles.steps += loads + compute;
      else
        cycles.steps += std::max(loads, compute);
      if (blk == 0 && !hasMask)
        cycles.firstOnCore = loads + compute - std::max(loads, compute);
    }
    return cycles;
  };
  // Every head's panel at the same rows costs the same.
  DenseMap<std::pair<int64_t, int64_t>, UnitCycles> cyclesAt;
  double busiest = 0;
  for (ArrayRef<int64_t> list : assign(units, cores)) {
    double core = 0;
    for (auto [n, u] : llvm::enumerate(list)) {
      auto [it, inserted] = cyclesAt.try_emplace(
          {units[u].q0, units[u].split < units[u].rows ? units[u].q1 : -1}, UnitCycles());
      if (inserted)
        it->second = unitCycles(units[u]);
      core += it->second.steps + (n == 0 ? it->second.firstOnCore : 0.0);
    }
    busiest = std::max(busiest, core);
  }
  // Before the first step, a panel of queries; after the last, the store
  // of the last block of rows (paying the bus's read/write turnaround): the
  // final panel's other blocks go out while the last is computed, but for
  // the first run of a folded panel, done long before and stored with the
  // rest in the last step.
  double queryBytes = double(std::min(panel, lq) * d * es);
  double outputBytes = double((std::min(block, lq) + (tileFolds(tile) ? panel / 2 : 0)) * dv * es);
  return busiest + queryBytes * sharing + latency +
         outputBytes * (sharing + active * arch.turnaroundCyclesPerByte()) + latency;
}

SmallVector<std::pair<double, SmallVector<int64_t>>>
AttentionPlan::rankTiles(int64_t cores, int64_t lxBytes) const {
  // Blocks of up to 128 query rows (the PT's output rows are cheap, its
  // operand feed is not), panels of whole blocks up to 512 rows sharing
  // each key/value block loaded from device memory, key blocks of whole
  // sticks up to 512: every combination that fits LX, ranked by estimate.
  // Larger panels read the keys and values fewer times; smaller ones
  // balance causal work among the cores and overlap one block's softmax
  // with another's products; which wins depends on the shape.
  constexpr int64_t kMaxBlockRows = 128, kMaxPanelRows = 512, kMaxKeys = 512;
  int64_t granule = std::max<int64_t>(1, arch.stickBytes / es);
  SmallVector<int64_t> keyChoices;
  for (int64_t keys = std::min(lk, kMaxKeys); keys >= 1;) {
    keyChoices.push_back(keys);
    int64_t next = keys > 128 ? keys - 128 : keys / 2;
    keys = next >= granule ? llvm::alignDown(next, granule) : next;
  }
  // Blocks of about equal length too: 515 cached positions (the 1B Llama's
  // decode step) in blocks of 384 leave a last block of 131 (10,078 cycles;
  // 320 and 195: 9,640), 258 f32 keys in blocks of 128 a block of 2 (72.9
  // us; 96 each: 66.7).
  for (int64_t parts = 2; parts <= 4; ++parts)
    if (int64_t keys = llvm::alignTo(llvm::divideCeil(lk, parts), granule);
        keys < std::min(lk, kMaxKeys) && !llvm::is_contained(keyChoices, keys))
      keyChoices.push_back(keys);
  SmallVector<std::pair<double, SmallVector<int64_t>>> ranked;
  for (int64_t block = std::min(lq, kMaxBlockRows); block >= 1;
       block = block == 1 ? 0 : llvm::divideCeil(block, 2)) {
    // Up to the last block, which may be short: a panel of all of a head's
    // 197 rows (a ViT's tokens) in blocks of 64 ended at 192, and the
    // panel of 5 rows after it read the head's keys and values again
    // (8 x 12 heads: 141.3 us; whole: 106.3).
    SmallVector<int64_t> panels;
    int64_t most = std::max(block, std::min(lq, kMaxPanelRows));
    for (int64_t panel = block; panel < most + block; panel += block)
      panels.push_back(std::min(panel, most));
    for (int64_t panel : llvm::make_range(panels.begin(), llvm::unique(panels)))
      for (int64_t keys : keyChoices)
        if (fits({panel, keys, block}, lxBytes)) {
          ranked.push_back({estimate({panel, keys, block}, cores), {panel, keys, block}});
          if (canFold(panel, block))
            ranked.push_back(
                {estimate({panel, keys, block, 1}, cores), {panel, keys, block, 1}});
        }
    // Blocks under 32 rows only when nothing larger fits, or when the
    // heads' panels leave cores without work (a decode step, whose few rows
    // are a memory-bound read of the keys and values): they feed the PT
    // poorly and multiply the candidates.
    if (!ranked.empty() && block <= 32 && heads * llvm::divideCeil(lq, block) >= cores)
      break;
  }
  llvm::stable_sort(ranked, [](auto &a, auto &b) { return a.first < b.first; });
  return ranked;
}

SmallVector<int64_t> AttentionPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  SmallVector<std::pair<double, SmallVector<int64_t>>> ranked = rankTiles(cores, lxBytes);
  return ranked.empty() ? SmallVector<int64_t>() : ranked.front().second;
}

SmallVector<SmallVector<int64_t>> AttentionPlan::tileCandidates(int64_t cores, int64_t lxBytes,
                                                               int64_t count) const {
  SmallVector<SmallVector<int64_t>> result;
  for (auto &[time, tile] : rankTiles(cores, lxBytes)) {
    if (int64_t(result.size()) >= count)
      break;
    result.push_back(tile);
  }
  return result;
}

LogicalResult AttentionPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                                   ArrayRef<int64_t> lx) const {
  const int64_t panel = tile[0], tk = tile[1], block = tile[2];
  SmallVector<LxSlot> slotList = slots(tile);
  auto slotAt = [&](Slot s, int64_t copy) { return lx[s] + copy * slotList[s].bytes; };
  const int64_t group = heads / kvHeads, maskGroup = hasMask ? heads / maskBatch : 1;
  const uint8_t f32 = uint8_t(ISA::DType::f32), dl16 = uint8_t(ISA::DType::dl16);
  const int64_t probEs = deviceDTypeBytes(dl16);
  const double inf = std::numeric_limits<double>::infinity();
  Location loc = attn.getLoc();

  SmallVector<Unit> units = unitsOf(panel, tk, tileFolds(tile));
  SmallVector<SmallVector<int64_t>> unitsOfCore = assign(units, cores);
  for (int64_t core = 0; core < cores; ++core) {
    // The steps of this core: (its unit number, key block).
    SmallVector<std::pair<int64_t, int64_t>> steps;
    for (auto [local, u] : llvm::enumerate(unitsOfCore[core]))
      for (int64_t blk = 0; blk < units[u].blocks; ++blk)
        steps.push_back({int64_t(local), blk});
    auto unitOf = [&](int64_t i) -> const Unit & { return units[unitsOfCore[core][steps[i].first]]; };
    // The keys of step i's block that its panel sees.
    auto keysOf = [&](int64_t i) {
      const Unit &unit = unitOf(i);
      int64_t k0 = steps[i].second * tk, keys = std::min(tk, lk - k0);
      return causal ? std::min(keys, unit.end() - k0) : keys; // none after the panel
    };
    // Per step, the panel's blocks of query rows that see keys of its
    // block; items are numbered over the core's steps (item g's scores and
    // probabilities use copy g % 2 of their slots), step i's from itemBase[i].
    SmallVector<SmallVector<Item>> itemsAt(steps.size());
    SmallVector<int64_t> itemBase(steps.size() + 1, 0);
    for (size_t i = 0; i < steps.size(); ++i) {
      const Unit &unit = unitOf(int64_t(i));
      int64_t k0 = steps[i].second * tk, keys = keysOf(int64_t(i));
      for (int64_t r0 = 0; r0 < unit.rows; r0 += block) {
        int64_t n = std::min(block, unit.rows - r0);
        int64_t seen = causal ? std::min(keys, unit.at(r0 + n - 1) + 1 - k0) : keys;
        if (seen > 0)
          itemsAt[i].push_back({r0, n, seen});
      }
      itemBase[i + 1] = itemBase[i] + int64_t(itemsAt[i].size());
    }
    // The key block of unit `local` during which the next unit's query
    // panel is loaded, or -1 (then the next unit's first step loads it).
    // All cores change units at about the same time, and a query panel
    // loaded there, beside the finished panel's store, held up the first
    // keys and values while the PT waited (32 x 2048 x 128 causal: 52 us
    // at each change); in mid unit the bus has room. Its copy of the
    // query slot was last read by the unit before, whose last step is at
    // least two steps earlier, as the pipeline requires.
    const int64_t unitsHere = int64_t(unitsOfCore[core].size());
    // A finished panel's output goes out in pieces of rows over the steps
    // that follow, for the same reason: stored whole, all cores' panels met
    // the next keys and values on the bus (after the query panels moved:
    // 24 us of the PT waiting at each change). Piece j of unit `local`'s
    // rows is stored by step lastStep[local] + j, and the last piece by step
    // lastStep[local + 2] - 2 at the latest: that step's stores are what
    // step lastStep[local + 2], which writes the same copy of the output
    // slot, waits for (the pipeline's rule). None waits for the core's last
    // step, after which nothing overlaps it; the core's last unit stores
    // its own blocks in that step (below).
    SmallVector<int64_t> firstStep(unitsHere, 0), lastStep(unitsHere, 0);
    for (auto [i, st] : llvm::enumerate(steps)) {
      if (st.second == 0)
        firstStep[st.first] = int64_t(i);
      lastStep[st.first] = int64_t(i);
    }
    struct Piece {
      int64_t local, r0, rows;
    };
    SmallVector<SmallVector<Piece>> piecesAt(steps.size());
    for (int64_t local = 0; local + 1 < unitsHere; ++local) {
      const Unit &unit = units[unitsOfCore[core][local]];
      int64_t from = lastStep[local];
      int64_t until = local + 2 < unitsHere ? lastStep[local + 2] - 2
                                            : std::max(from, int64_t(steps.size()) - 2);
      int64_t pieces = std::min<int64_t>(llvm::divideCeil(unit.rows, block), until - from + 1);
      int64_t per = int64_t(llvm::divideCeil(unit.rows, pieces));
      for (int64_t j = 0; j * per < unit.rows; ++j)
        piecesAt[from + j].push_back({local, j * per, std::min(per, unit.rows - j * per)});
    }
    auto queryPrefetchAt = [&](int64_t local) -> int64_t {
      int64_t blocks = units[unitsOfCore[core][local]].blocks;
      return local + 1 < unitsHere && blocks >= 2 ? std::max<int64_t>(1, blocks / 2) : -1;
    };
    // The step that scales unit `local`'s query panel: the one after its
    // prefetch while the unit before still runs, else the unit's first, so
    // that the SFU's pass over the panel is not between the two units.
    auto scaleStep = [&](int64_t local) {
      if (local > 0) {
        int64_t at = queryPrefetchAt(local - 1);
        if (at >= 0 && firstStep[local - 1] + at + 1 <= lastStep[local - 1])
          return firstStep[local - 1] + at + 1;
      }
      return firstStep[local];
    };
    // Whether step i computes the first scores of step i + 1 (with a second
    // item that can wait for that step's loads), so that the PT works while
    // the SFU finishes step i. Step i + 1 may start the next panel when its
    // queries were prefetched and scaled before: by an earlier step, or by
    // this one when the started product follows one of this step's
    // probabilities x values, which follows the scaling on the SFU.
    auto startsNext = [&](int64_t i) {
      if (i + 1 >= int64_t(steps.size()) || itemsAt[i + 1].size() < 2)
        return false;
      int64_t local = steps[i].first, next = steps[i + 1].first;
      if (next == local)
        return true;
      if (queryPrefetchAt(local) < 0)
        return false;
      int64_t at = scaleStep(next);
      return scale == 1 || at < i || (at == i && itemsAt[i].size() >= 2);
    };
    // The product step i started for step i + 1 (computes run in order).
    Operation *started = nullptr;
    auto stepAt = [&](int64_t i) {
      auto [local, blk] = steps[i];
      const Unit &unit = unitOf(i);
      bool first = blk == 0, last = blk + 1 == unit.blocks;
      int64_t k0 = blk * tk, keys = keysOf(i);
      int64_t rows = unit.rows, kv = unit.head / group;
      int64_t qAt = slotAt(kQ, local % 2), outAt = slotAt(kOut, local % 2);
      int64_t kAt = slotAt(kK, i % 2), vAt = slotAt(kV, i % 2), maskAt = slotAt(kMask, i % 2);
      int64_t accAt = slotAt(kAcc, 0), rowsAt = slotAt(kRows, 0);
      int64_t cellsAt = rowsAt + kNumRowVecs * panel * 4;

      TileStep step;
      // `count` rows of d elements from row `r0` of head `h` of q or k, to
      // consecutive rows in LX: one transfer where the rows are consecutive
      // in device memory, else a row at a time (a projection's heads).
      auto rowsLoad = [&](Value operand, const AttentionOp::View &view, int64_t h, int64_t r0,
                          int64_t count, int64_t at) -> Transfer {
        int64_t offset = (view.headOffset(h) + r0 * view.rowStride) * es;
        if (view.rowStride == d || count == 1)
          return {em.lx(dtype, at), em.device(operand, dtype, offset), count * d * es};
        return {em.lx(dtype, at, {d * es, 0, 0}),
                em.device(operand, dtype, offset, {view.rowStride * es, 0, 0}), d * es,
                {count, 1, 1}};
      };
      bool scalesHere = scale != 1 && scaleStep(local) == i,
           scalesNext = scale != 1 && local + 1 < unitsHere && scaleStep(local + 1) == i &&
                        i != firstStep[local + 1];
      // A panel's queries: a load per run of rows.
      auto queryLoads = [&](const Unit &u, int64_t at, SmallVectorImpl<Transfer> &to) {
        to.push_back(rowsLoad(attn.getQuery(), qView, u.head, u.q0, u.split, at));
        if (u.split < u.rows)
          to.push_back(rowsLoad(attn.getQuery(), qView, u.head, u.q1, u.rows - u.split,
                                at + u.split * d * es));
      };
      bool queryHere = first && (local == 0 || queryPrefetchAt(local - 1) < 0);
      if (queryHere) {
        queryLoads(unit, qAt, step.loads);
        // The query, and without a mask the keys: the first product needs
        // no more (a mask's add on the SFU comes first).
        step.operandLoads = step.loads.size() + (hasMask ? 0 : 1);
      }
      if (blk == queryPrefetchAt(local))
        queryLoads(units[unitsOfCore[core][local + 1]], slotAt(kQ, (local + 1) % 2),
                   step.prefetches);
      step.loads.push_back(rowsLoad(attn.getKey(), kView, kv, k0, keys, kAt));
      // Values as rows of dv + 1 elements: the last is 1, so that the PT's
      // probabilities x values also sums the probabilities (the softmax's
      // denominator) into the accumulator's last column, and the SFU need
      // not reduce them.
      step.loads.push_back({em.lx(dtype, vAt, {(dv + 1) * es, 0, 0}),
                            em.device(attn.getValue(), dtype,
                                      (vView.headOffset(kv) + k0 * vView.rowStride) * es,
                                      {vView.rowStride * es, 0, 0}),
                            dv * es,
                            {keys, 1, 1}});
      if (hasMask) {
        int64_t mb = unit.head / maskGroup, r0 = maskRows == 1 ? 0 : unit.q0;
        step.loads.push_back(
            {em.lx(maskDtype, maskAt, {tk * maskEs, 0, 0}),
             em.device(attn.getMask(), maskDtype, ((mb * maskRows + r0) * lk + k0) * maskEs,
                       {lk * maskEs, 0, 0}),
             keys * maskEs,
             {maskRows == 1 ? 1 : rows, 1, 1}});
      }
      // The core's last panel is divided by its sums and stored a block of
      // rows at a time, in its last step: a block once its last product is
      // done (the rows before the step's blocks, which saw none of its keys,
      // with the first), so that only the last block's store is left when
      // the PT is done. (The other panels' pieces overlap later steps.)
      bool finalPanel = last && local + 1 == unitsHere;
      assert(!itemsAt[i].empty() && "a step multiplies some rows");
      // The final panel's pieces come first in `stores`: the rows before the
      // step's items (`beforeStores`: none, or one per run of rows they
      // span in a folded panel), then one per item (`itemStores`; a block
      // of rows lies in one run).
      SmallVector<Piece> pieces;
      SmallVector<int64_t> itemStores, beforeStores;
      // Adds a piece, as two where it spans both runs of a folded panel.
      auto addPiece = [&](Piece piece) {
        const Unit &done = units[unitsOfCore[core][piece.local]];
        if (piece.r0 < done.split && piece.r0 + piece.rows > done.split) {
          pieces.push_back({piece.local, piece.r0, done.split - piece.r0});
          piece = {piece.local, done.split, piece.r0 + piece.rows - done.split};
        }
        pieces.push_back(piece);
      };
      int64_t rowsBefore = itemsAt[i].front().r0;
      if (finalPanel) {
        if (rowsBefore > 0)
          addPiece({local, 0, rowsBefore});
        for (int64_t n = 0; n < int64_t(pieces.size()); ++n)
          beforeStores.push_back(n);
        for (const Item &it : itemsAt[i]) {
          itemStores.push_back(int64_t(pieces.size()));
          addPiece({local, it.r0, it.rows});
        }
      }
      for (const Piece &piece : piecesAt[i])
        addPiece(piece);
      for (const Piece &piece : pieces) {
        const Unit &done = units[unitsOfCore[core][piece.local]];
        int64_t from = slotAt(kOut, piece.local % 2) + piece.r0 * dv * es, q = done.at(piece.r0);
        if (outHeads) {
          // Row i of head h of batch b goes to row q0 + i of batch b, after
          // the row's first h heads.
          int64_t b = done.head / outHeads, h = done.head % outHeads;
          step.stores.push_back(
              {em.device(attn.getTarget(), dtype, ((b * lq + q) * outHeads + h) * dv * es,
                         {outHeads * dv * es, 0, 0}),
               em.lx(dtype, from, {dv * es, 0, 0}), dv * es, {piece.rows, 1, 1}});
        } else {
          step.stores.push_back({em.device(attn.getTarget(), dtype, (done.head * lq + q) * dv * es),
                                 em.lx(dtype, from), piece.rows * dv * es});
        }
      }

      SmallVector<Item> items = itemsAt[i], nextItems;
      const Unit panelRows = unit;
      int64_t base = itemBase[i];
      bool startedHere = i > 0 && startsNext(i - 1), startNext = startsNext(i);
      int64_t nextK = slotAt(kK, (i + 1) % 2), nextQ = qAt;
      if (startNext) {
        nextItems = itemsAt[i + 1];
        nextQ = slotAt(kQ, steps[i + 1].first % 2);
      }
      step.compute = [=, this, &em, &started](StepCompute &sc) {
        OpBuilder &b = sc.b();
        auto view = [&](uint8_t type, int64_t at, int64_t rowStride, int64_t colStride) {
          return em.lx(type, at, {rowStride, colStride, 0});
        };
        // A per-row value of the rows from r0: a column, or broadcast along
        // a tile's row.
        auto row = [&](RowVec r, int64_t r0) {
          return view(f32, rowsAt + (r * panel + r0) * 4, 4, 0);
        };
        auto cell = [&](int64_t c) { return view(f32, cellsAt + c * 4, 0, 0); };
        // The step's dependencies are explicit (StepCompute::add with
        // `after`): nullptr waits only for the engine's earlier work.
        auto add = [&](Operation *op, Operation *after = nullptr) { return sc.add(op, after); };
        auto fill = [&](RefAttr dst, double value, int64_t r, int64_t c) {
          return add(HwFillOp::create(b, loc, dst, APFloat(value), APFloat(0.0), APFloat(0.0), r,
                                      c, nullptr, 0, nullptr, nullptr));
        };
        auto binary = [&](StringRef func, RefAttr dst, RefAttr lhs, RefAttr rhs, int64_t r,
                          int64_t c, Operation *after = nullptr) {
          return add(HwBinaryOp::create(b, loc, func, dst, lhs, rhs, FloatAttr(), r, c, nullptr,
                                        0, nullptr, nullptr),
                     after);
        };
        auto binaryImm = [&](StringRef func, RefAttr dst, RefAttr lhs, double imm, int64_t r,
                             int64_t c, Operation *after = nullptr) {
          return add(HwBinaryOp::create(b, loc, func, dst, lhs, Attribute(),
                                        b.getF64FloatAttr(imm), r, c, nullptr, 0, nullptr,
                                        nullptr),
                     after);
        };
        auto unary = [&](StringRef func, RefAttr dst, RefAttr src, int64_t r, int64_t c,
                         Operation *after = nullptr) {
          return add(HwUnaryOp::create(b, loc, func, dst, src, r, c, nullptr, 0, nullptr, nullptr),
                     after);
        };
        auto select = [&](RefAttr dst, RefAttr cond, RefAttr lhs, RefAttr rhs, int64_t r,
                          int64_t c, Operation *after = nullptr) {
          return add(HwSelectOp::create(b, loc, dst, cond, lhs, rhs, r, c, nullptr, 0, nullptr,
                                        nullptr),
                     after);
        };
        auto reduce = [&](StringRef func, RefAttr dst, RefAttr src, int64_t r, int64_t c) {
          return add(HwReduceOp::create(b, loc, func, dst, src, nullptr, nullptr, true,
                                        APFloat(0.0), r, c, nullptr, 0, nullptr, nullptr));
        };
        // The accumulator's rows: dv outputs, then the sum of probabilities.
        const int64_t accRow = (dv + 1) * 4;
        auto acc = [&](int64_t r0) { return view(f32, accAt + r0 * accRow, accRow, 4); };
        auto sums = [&](int64_t r0) { return view(f32, accAt + r0 * accRow + dv * 4, accRow, 0); };
        // The output rows [r0, r0 + r): the accumulator over the sums, once
        // `after` (their last product) is done. A row that saw only masked
        // keys has sum 0 and gives zeros.
        auto divide = [&](int64_t r0, int64_t r, Operation *after) {
          binaryImm("eq", row(kIsZero, r0), sums(r0), 0, r, 1, after);
          select(row(kSafeSum, r0), row(kIsZero, r0), cell(2), sums(r0), r, 1);
          return binary("div", view(dtype, outAt + r0 * dv * es, dv * es, es), acc(r0),
                        row(kSafeSum, r0), r, dv);
        };
        // The final panel's rows before the step's items, divided once
        // `after` is done, go out in their stores (one per run of rows).
        auto storeRowsBefore = [&](Operation *after) {
          if (rowsBefore == 0)
            return;
          Operation *divided = divide(0, rowsBefore, after);
          for (int64_t store : beforeStores)
            sc.storeAfter(size_t(store), divided);
        };
        // The scale goes into the query panel once, not into every block of
        // scores; the PT rounds its operands to 16 bits either way.
        auto scaleQuery = [&](int64_t at, int64_t count, Operation *after) {
          return binaryImm("mul", view(dtype, at, d * es, es), view(dtype, at, d * es, es), scale,
                           count, d, after);
        };
        // Without a mask, the step's first product waits for the query's
        // scaling (after its query and keys arrived) where the step scales
        // it, else for the set-up, which waits for all of the step's loads:
        // the values are for the work after it (the 32 x 2048 x 128
        // prefill's PT started 57 us in, waiting for the first values of all
        // cores). Not with a mask yet: there the earlier start gained
        // 0.2-1 us (1.1 us of a decode step's 10.1) but sped up an f32 dense
        // mask's kernel past its causal form, whose tiles the estimate ranks
        // poorly (53.3 us available, 64.5 chosen;
        // test_causal_mask_runs_causal_on_the_card).
        Operation *setup = nullptr, *scaled = nullptr;
        if (first) {
          bool setupFollows = scalesHere;
          if (scalesHere)
            scaled = scaleQuery(qAt, rows, nullptr);
          if (i == 0) {
            // Constants, and the column of ones after the values in both
            // copies of their slot (loads leave it): once per core.
            fill(cell(0), -inf, 1, 1);
            fill(cell(1), 0, 1, 1);
            fill(cell(2), 1, 1, 1);
            for (int64_t copy = 0; copy < 2; ++copy)
              fill(view(dtype, slotAt(kV, copy) + dv * es, (dv + 1) * es, 0), 1, tk, 1);
            setupFollows = true;
          }
          setup = fill(row(kMax, 0), -inf, rows, 1);
          // The set-up waits for the step's loads when the first product
          // waits for it (above), as the step's first instruction when
          // nothing comes before it.
          if (setupFollows && (hasMask || !queryHere))
            sc.waitsForLateLoads(setup);
        }
        // Where key j of a causal block lies after query row i: 1 + j - i > 0,
        // computed once per core. A block whose keys start o - 1 columns
        // before its diagonal reads it from column o - 1.
        const int64_t causalRow = block * 4;
        if (causal && i == 0) {
          RefAttr after = view(f32, slotAt(kCausal, 0), causalRow, 4);
          add(HwFillOp::create(b, loc, after, APFloat(1.0), APFloat(-1.0), APFloat(1.0), block,
                               block, nullptr, 0, nullptr, nullptr));
          binaryImm("gt", after, after, 0, block, block);
        }
        // Item n's scores and probabilities use copy (base + n) % 2 of their
        // slots, so the PT computes the next item's scores while the SFU
        // turns this item's into probabilities, and the first scores of the
        // next step while the SFU finishes this one:
        //   PT:  S0 S1 . PV0 S2 . PV1 S'0 PV2 | S'1 . PV'0 ...
        //   SFU:       P0      P1      P2     |      P'0 ...
        auto copyOf = [&](int64_t n) { return (base + n) % 2; };
        auto scoresOf = [&](int64_t n, int64_t rowStride, int64_t colStride) {
          return view(f32, slotAt(kScores, copyOf(n)), rowStride, colStride);
        };
        auto productOf = [&](const Item &it, int64_t n, int64_t queryAt, int64_t keysAt,
                             Operation *after) {
          return add(HwMatmulOp::create(b, loc, scoresOf(n, tk * 4, 0),
                                        view(dtype, queryAt + it.r0 * d * es, d * es, 0),
                                        view(dtype, keysAt, d * es, 0), it.rows, d, it.keys,
                                        false, true, false, nullptr, 0, nullptr, nullptr),
                     after);
        };
        auto product = [&](int64_t n, Operation *after) {
          return productOf(items[n], n, qAt, kAt, after);
        };
        // Products in PT order: item n + 2's (or, after the last, the next
        // step's first) right after item n's probabilities x values.
        SmallVector<Operation *> products;
        auto nextProduct = [&](size_t n) {
          if (n < items.size()) {
            products.push_back(product(int64_t(n), nullptr));
          } else if (n == items.size() && startNext) {
            started = productOf(nextItems[0], int64_t(n), nextQ, nextK, nullptr);
            sc.waitsForNextLoads(started);
          }
        };
        products.push_back(startedHere ? started : product(0, scaled && !hasMask ? scaled : setup));
        // The next panel's queries, prefetched by an earlier step of this
        // one, once this step's loads are in: after this step's first
        // product, which waited for them, or as the step's first
        // instruction, which waits for them, when that product was started
        // by the step before.
        if (scalesNext)
          scaleQuery(slotAt(kQ, (local + 1) % 2), units[unitsOfCore[core][local + 1]].rows,
                     startedHere ? nullptr : products.front());
        nextProduct(1);
        Operation *lastProduct = nullptr;
        for (auto [n, it] : llvm::enumerate(items)) {
          int64_t r = it.rows, c = it.keys;
          RefAttr scores = scoresOf(n, tk * 4, 4);
          RefAttr probs = view(dl16, slotAt(kProbs, copyOf(n)), tk * probEs, probEs);
          // The first SFU instruction of the item waits for its scores.
          Operation *scoresReady = products[n];
          if (hasMask) {
            RefAttr mask = view(maskDtype,
                                maskAt + (maskRows == 1 ? 0 : it.r0 * tk * maskEs),
                                maskRows == 1 ? 0 : tk * maskEs, maskEs);
            binary("add", scores, scores, mask, r, c, scoresReady);
            scoresReady = nullptr;
          }
          // Key k0 + j is masked for query q0 + r0 + i when
          // (k0 - q0 - r0) + j - i > 0: only columns from q0 + r0 - k0 + 1
          // on can be, at most the block's last `r` columns.
          int64_t q0 = panelRows.at(it.r0);
          int64_t from = std::max<int64_t>(0, q0 - k0 + 1);
          if (causal && from < c) {
            // Masked where o + j - i > 0, o = k0 + from - q0 - r0 >= 1: the
            // core's pattern from column o - 1 (o - 1 + cols < the block).
            int64_t cols = c - from, o = k0 + from - q0;
            assert(o >= 1 && o - 1 + cols <= block && "beyond the causal pattern");
            RefAttr after = view(f32, slotAt(kCausal, 0) + (o - 1) * 4, causalRow, 4);
            RefAttr tail = view(f32, slotAt(kScores, copyOf(n)) + from * 4, tk * 4, 4);
            select(tail, after, cell(0), tail, r, cols, scoresReady);
            scoresReady = nullptr;
          }
          // Online softmax: the new running maximum (0 while a row has seen
          // only masked keys, so that exp(-inf - 0) = 0 rather than NaN),
          // the factor exp(old - new) for what was summed before, then this
          // block.
          unary("copy", row(kOldMax, it.r0), row(kMax, it.r0), r, 1, scoresReady);
          reduce("max", row(kMax, it.r0), scores, r, c);
          binaryImm("eq", row(kIsZero, it.r0), row(kMax, it.r0), -inf, r, 1);
          select(row(kSafeMax, it.r0), row(kIsZero, it.r0), cell(1), row(kMax, it.r0), r, 1);
          binary("sub", row(kScale, it.r0), row(kOldMax, it.r0), row(kSafeMax, it.r0), r, 1);
          unary("exp", row(kScale, it.r0), row(kScale, it.r0), r, 1);
          binary("sub", scores, scores, row(kSafeMax, it.r0), r, c);
          Operation *ready = unary("exp", probs, scores, r, c);
          // Without a mask, the step's loads after its query and keys (the
          // values) are first needed by this product of probabilities and
          // values: its exponential waits for them, not the set-up.
          if (queryHere && !hasMask && n == 0)
            sc.waitsForLateLoads(ready);
          if (!first)
            ready = binary("mul", acc(it.r0), acc(it.r0), row(kScale, it.r0), r, dv + 1);
          Operation *previous = lastProduct;
          lastProduct = add(HwMatmulOp::create(b, loc, view(f32, accAt + it.r0 * accRow, accRow, 0),
                                               view(dl16, slotAt(kProbs, copyOf(n)), tk * probEs, 0),
                                               view(dtype, vAt, (dv + 1) * es, 0), r, c, dv + 1, false,
                                               false, !first, nullptr, 0, nullptr, nullptr),
                            ready);
          nextProduct(n + 2);
          // The item before is divided once this item's probabilities are
          // in (the SFU does not wait for a product it could overlap).
          if (finalPanel && n > 0) {
            if (n == 1)
              storeRowsBefore(previous);
            sc.storeAfter(size_t(itemStores[n - 1]),
                          divide(items[n - 1].r0, items[n - 1].rows, previous));
          }
        }
        if (last && !finalPanel)
          divide(0, rows, lastProduct);
        if (finalPanel) {
          if (items.size() == 1)
            storeRowsBefore(lastProduct);
          sc.storeAfter(size_t(itemStores.back()),
                        divide(items.back().r0, items.back().rows, lastProduct));
        }
      };
      return step;
    };
    em.pipeline(core, loc, int64_t(steps.size()), stepAt);
  }
  return success();
}

} // namespace

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeAttentionPlan(AttentionOp op,
                                                                 const ::spyre::Arch &arch) {
  return analyzedPlan<AttentionPlan>(op, arch);
}
