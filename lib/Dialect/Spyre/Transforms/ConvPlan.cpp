//===- ConvPlan.cpp - running spyre.conv2d on the card ---------------------===//
//
// Implicit GEMM. A unit of work is one image's band of R output rows for a
// chunk of Cb output channels; cores take runs of consecutive units. A core
// holds the band's input rows (all channels, the rows the kernel's taps
// reach) in LX at a row pitch of the padded width Wp = W + pw + pw', with zero
// columns left and right and zero rows above and below the image. Output
// position (y, x) of the band is then element y * Wp + x of a run of
// (R - 1) * Wp + Wo elements, and tap (i, j) reads the same run shifted by
// i * dh * Wp + j * dw: each tap is one product of its weights (Cb x C, row
// major) with a strided view of the input rows (C x run), summed into one
// f32 accumulator. The Wp - Wo positions between output rows are computed
// and dropped: the store writes Wo of every Wp. No patch matrix (im2col)
// reaches device memory.
//
// Where LX has room (the tile's third size), the SFU first copies the taps'
// shifted views one under the other into a column block, and products of
// K = (taps of a group) x C replace the taps' products: the accumulator is
// streamed once per group, not once per tap, and the SFU copies the next
// group while the PT multiplies. Gathered taps of an output as wide as the
// input need no padding columns (see `packs`): the rows keep the pitch W
// and move as one run per channel each way. A strided convolution always
// gathers: its taps read every sw-th column of every sh-th row, so the SFU
// copies each tap's positions one output row at a time (a column stride of
// sw), and the run is the band's output rows at a pitch of Wo. A copy takes
// a kernel row's taps of one channel, or one tap's channels, whichever
// makes fewer copies (a 3-channel image's 32 x 32 patches: 3, not 32).
//
// After the last product the SFU converts the accumulator in place
// (multiplying by a per-channel scale, adding the bias and a residual band
// loaded with the step, then the ReLU) and the band is stored. The bias is
// a product's column of weights times a row of ones when a residual or a
// ReLU follows (see `biasInProduct`), else the SFU's add that narrows the
// sums.
//
// The weights arrive as PyTorch stores them (output channel, input
// channel, tap). Gathered taps may keep that order (the tile's third size
// 2): K then runs over (channel, tap), the columns are gathered in that
// order, and the loaded weights are the product's left operand. Otherwise
// the SFU copies each tap's Cb x C matrix out of them once per chunk: a
// pass over the weights, but fewer, longer copies of the columns; the
// estimate chooses. When one chunk holds every output channel, its weights
// are a first step of their own, which every core starts with the same
// read and whose copies overlap the load of the first rows. A grouped
// convolution is the dense one of a block-diagonal weight: the SFU zeroes
// the taps and copies each group's block onto the diagonal. Its chunks are
// whole groups (or parts of one) and read only their groups' input
// channels, so that a depthwise convolution's products sum over a chunk's
// channels, not all of them: the zeros cost the chunk's width, not the
// convolution's.
//
//===----------------------------------------------------------------------===//

#include "PlanKinds.h"
#include "HwEmitter.h"
#include "spyre-mlir/Isa/Isa.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

namespace {

/// The LX slots, in the order of `spyre.lx`.
enum Slot : unsigned { kInput, kWeight, kTaps, kBias, kAcc, kResidual, kColumns };

class ConvPlan : public OpPlan {
public:
  ConvPlan(Conv2dOp op, const ::spyre::Arch &arch) : OpPlan(op, arch), conv(op) {}
  LogicalResult analyze();

  SPYRE_OPPLAN_OVERRIDES

private:
  /// Input rows a band of `rows` output rows reads.
  int64_t inputRows(int64_t rows) const { return (rows - 1) * sh + dh * (kh - 1) + 1; }
  /// A strided convolution's taps read every sh-th row and sw-th column:
  /// no shifted view of the rows is a tap's operand, so the taps are always
  /// gathered, each output row's positions copied out of the rows.
  bool strided() const { return sh > 1 || sw > 1; }
  /// Whether the tile keeps the input rows unpadded, at a pitch of W: when
  /// the taps are gathered and the output is as wide as the input, a tap's
  /// view shifted by its column offset is right but for the positions that
  /// wrap into the next or previous row, which are where the padding
  /// columns would be read, and the copy's last instruction zeroes them.
  /// Rows then move as one run per channel each way, not row by row.
  bool packs(ArrayRef<int64_t> tile) const {
    return gathers(tile) && pw > 0 && pwAfter == pw && wo == w && !strided();
  }
  /// The row pitch of the input rows in LX.
  int64_t pitch(ArrayRef<int64_t> tile) const { return packs(tile) ? w : wp; }
  /// The row pitch of the run the products compute (and of the output and
  /// residual rows in LX): the input rows' for stride 1, whose taps are
  /// shifted views of them; Wo for strided ones, whose taps' positions are
  /// copied out row by row.
  int64_t runPitch(ArrayRef<int64_t> tile) const { return strided() ? wo : pitch(tile); }
  /// Elements of the run a band of `rows` output rows computes.
  int64_t run(int64_t rows, int64_t rowPitch) const { return (rows - 1) * rowPitch + wo; }
  /// Elements before and after the packed rows that the shifted views of
  /// the first and last channel read (and whose positions they zero).
  int64_t margin(ArrayRef<int64_t> tile) const { return packs(tile) ? pw : 0; }
  int64_t chunks(int64_t cb) const { return llvm::divideCeil(co, cb); }
  /// Input channels a chunk of `cb` output channels reads: all of them, or
  /// a grouped convolution's chunk's groups' (see `validChunk`).
  int64_t chunkInputs(int64_t cb) const {
    return groups == 1 ? c : std::min(c, std::max<int64_t>(1, cb / cog) * cg);
  }
  /// Chunk widths a grouped convolution allows, so that every chunk reads
  /// as many input channels: whole groups that divide the output channels,
  /// or a part of one group that divides it (a dense product of that
  /// group's channels).
  bool validChunk(int64_t cb) const {
    return cb >= 1 && cb <= co &&
           (groups == 1 || (cb % cog == 0 && co % cb == 0) || cog % cb == 0);
  }
  /// Whether a chunk's weights are one dense block (no zeros between
  /// groups): a dense convolution's, or a part of one group's.
  bool denseChunk(int64_t cb) const { return groups == 1 || cb <= cog; }
  int64_t units(ArrayRef<int64_t> tile) const {
    return n * llvm::divideCeil(ho, tile[0]) * chunks(tile[1]);
  }
  /// The run of consecutive units `core` of `cores` takes of `total`: its
  /// first and how many (`lower` and the estimate's shared reads).
  static std::pair<int64_t, int64_t> coreUnits(int64_t total, int64_t core, int64_t cores) {
    int64_t first = llvm::divideCeil(total * core, cores);
    return {first, int64_t(llvm::divideCeil(total * (core + 1), cores)) - first};
  }
  /// Whether the tile gathers the taps into one product (its third size).
  static bool gathers(ArrayRef<int64_t> tile) { return tile.size() > 2 && tile[2] >= 1; }
  bool fits(ArrayRef<int64_t> tile, int64_t lxBytes) const;
  /// Rows of `length` elements at a row pitch of `lxPitch` in LX and of
  /// `length` in device memory move as one run per channel when the pitches
  /// match (no padding columns, no dropped positions), else row by row.
  bool oneRun(int64_t length, int64_t lxPitch) const { return length == lxPitch; }
  /// Device bytes the transfers of `rows` such rows of one channel touch:
  /// whole sticks, one more for a run that does not start on one.
  double deviceBytes(int64_t rows, int64_t length, int64_t lxPitch) const;
  /// The LX and device sides and shape of the transfer of `channels`
  /// channels' `rows` rows of `length` elements: in LX from `lxAt` at row
  /// pitch `lxPitch`, channels `lxChannel` elements apart; in device memory
  /// from byte `deviceAt` of `buffer`, rows `length` and channels
  /// `deviceChannel` elements apart.
  struct Rows {
    RefAttr local, device;
    int64_t rowBytes;
    std::array<int64_t, 3> counts;
  };
  Rows rowsOf(HwEmitter &em, int64_t lxAt, int64_t lxPitch, int64_t lxChannel, Value buffer,
              int64_t deviceAt, int64_t deviceChannel, int64_t rows, int64_t length,
              int64_t channels) const;
  /// Gathered taps: the SFU copies them in groups, and one product per
  /// group (adding into the accumulator after the first) runs while the SFU
  /// copies the next group. Returns the number of groups that finishes a
  /// band of `length` positions and `cb` channels first, and its cycles.
  std::pair<int64_t, double> tapGroups(ArrayRef<int64_t> tile, int64_t cb, int64_t length) const;
  /// Whether a strided convolution's copies of taps [ta, tb), all of one
  /// kernel row, go channel by channel (each a copy of the taps' columns
  /// for one output row) rather than tap by tap (each of the channels): the
  /// fewer copies. A 3-channel image's 32 x 32 patches (CLIP's): 3 copies
  /// of 32 taps per kernel and output row, not 32 of 3 channels.
  bool copiesByChannel(int64_t ta, int64_t tb, int64_t channels) const {
    return tb - ta > channels;
  }
  /// SFU cycles of the copies of taps [t0, t1) of `channels` channels for a
  /// run of `length` positions, as `lower` emits them.
  double gatherCycles(int64_t t0, int64_t t1, int64_t channels, int64_t length) const;
  /// Taps [first, last) of group `g` of `numGroups`.
  std::pair<int64_t, int64_t> groupTaps(int64_t g, int64_t numGroups) const {
    return {kh * kw * g / numGroups, kh * kw * (g + 1) / numGroups};
  }
  /// Input channels [first, last) of group `g` of `numGroups` (natural
  /// weights, whose groups are runs of channels).
  std::pair<int64_t, int64_t> groupChannels(int64_t g, int64_t numGroups) const {
    return {c * g / numGroups, c * (g + 1) / numGroups};
  }
  /// The tile's third sizes this convolution allows.
  SmallVector<int64_t> gatherings() const;
  /// Estimated cycles of the busiest core (the tile search's measure).
  double estimate(ArrayRef<int64_t> tile, int64_t cores) const;
  /// Over a core's unit steps, the mean number of different weight chunks
  /// and of different input blocks the busy cores load at one step: cores
  /// loading the same block in the same cycle are read once (`lower` hands
  /// each core a run of consecutive units, chunks within a band).
  std::pair<double, double> distinctLoads(ArrayRef<int64_t> tile, int64_t cores) const;

  mutable Conv2dOp conv;
  int64_t n = 0, c = 0, h = 0, w = 0, co = 0, kh = 0, kw = 0, ho = 0, wo = 0;
  // Padding before the rows and columns; after the columns (rows after the
  // image read zeros as far as the output reaches).
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, pwAfter = 0, dh = 1, dw = 1, wp = 0;
  int64_t groups = 1, cg = 0, cog = 0; // groups, input and output channels of each
  /// Whether dense gathered taps read the weights as PyTorch lays them out:
  /// K then runs over (channel, tap), so the product's left operand is the
  /// loaded weights themselves (a row one longer when the bias joins them)
  /// and the gathered columns are ordered likewise; the SFU copies no taps.
  bool natural(ArrayRef<int64_t> tile) const { return tile.size() > 2 && tile[2] == 2; }
  /// Whether the SFU copies the taps out of the loaded weights into a slot
  /// of their own (not for natural ones, nor for one dense tap without the
  /// bias, whose loaded weights are its matrix).
  bool copiesTaps(ArrayRef<int64_t> tile) const {
    return !natural(tile) && (kh * kw > 1 || groups > 1 || biasInProduct(tile));
  }
  /// Whether a chunk's new weights need SFU work: tap copies, or the bias
  /// copied into its column.
  bool preparesWeights(ArrayRef<int64_t> tile) const {
    return copiesTaps(tile) || biasInProduct(tile);
  }
  /// The loaded weights' row pitch in LX (elements).
  int64_t weightPitch(ArrayRef<int64_t> tile) const {
    return cg * kh * kw + (natural(tile) && biasInProduct(tile) ? 1 : 0);
  }
  /// Whether the bias enters the product: one more column of the taps'
  /// weights holds it, and one more row of ones under the product's right
  /// operand (a channel of ones after the input rows, or a row of ones
  /// under the gathered columns) multiplies it. That saves an SFU pass over
  /// the f32 sums when a residual or a ReLU follows; alone, the bias's add
  /// is the pass that narrows the result anyway, unless the product writes
  /// the result.
  bool biasInProduct(ArrayRef<int64_t> tile) const {
    return hasBias && !hasScale && biasDtype == dtype && (hasResidual || relu || writes(tile));
  }
  /// Whether gathered taps go into one product that writes the result in
  /// the output's type (the tile's third size 3): no SFU pass follows it,
  /// so the SFU gathers the next unit's taps (into the other copy of the
  /// column block) while the PT multiplies. Only a bias may follow the
  /// sums, and it joins the product.
  static bool writes(ArrayRef<int64_t> tile) { return tile.size() > 2 && tile[2] == 3; }
  /// Whether the sums need nothing but a bias: the product may write them.
  bool plainResult() const {
    return !hasScale && !hasResidual && !relu && (!hasBias || biasDtype == dtype);
  }
  /// The taps' row pitch (elements): side by side when the taps are
  /// gathered (K runs over taps, then channels), else each its own matrix.
  int64_t tapsPitch(ArrayRef<int64_t> tile) const {
    if (natural(tile))
      return weightPitch(tile);
    int64_t ci = chunkInputs(tile[1]);
    return (gathers(tile) ? kh * kw * ci : ci) + int64_t(biasInProduct(tile));
  }
  uint8_t dtype = 0;
  int64_t es = 0;
  bool hasBias = false, hasScale = false, hasResidual = false, relu = false;
  std::optional<double> reluMax; ///< with relu: results above it become it (ReLU6)
  /// The bias's and the scale's element types and bytes (the input's, or
  /// f32, as a folded BatchNorm keeps them).
  uint8_t biasDtype = 0, scaleDtype = 0;
  int64_t biasEs = 0, scaleEs = 0;
};

LogicalResult ConvPlan::analyze() {
  if (failed(checkStaticRowMajor(conv)))
    return failure();
  auto in = cast<BufferType>(conv.getInput().getType());
  auto wt = cast<BufferType>(conv.getWeight().getType());
  auto out = cast<BufferType>(conv.getTarget().getType());
  n = in.getDimSize(0), c = in.getDimSize(1), h = in.getDimSize(2), w = in.getDimSize(3);
  co = wt.getDimSize(0), kh = wt.getDimSize(2), kw = wt.getDimSize(3);
  ho = out.getDimSize(2), wo = out.getDimSize(3);
  sh = conv.getStrides()[0], sw = conv.getStrides()[1];
  ph = conv.getPadding()[0], pw = conv.getPadding()[1];
  pwAfter = conv.getPadding().size() == 4 ? conv.getPadding()[3] : pw;
  dh = conv.getDilation()[0], dw = conv.getDilation()[1];
  wp = w + pw + pwAfter;
  groups = conv.getGroups();
  cg = c / groups, cog = co / groups;
  if (n == 0 || co == 0 || ho == 0 || wo == 0)
    return conv.emitError() << "cannot run on the card: an empty convolution";
  if (c == 0 || kh == 0 || kw == 0)
    return conv.emitError() << "cannot run on the card: a convolution over no input channels "
                               "or taps is a fill, not a product";
  dtype = deviceDType(in.getElementType());
  es = deviceDTypeBytes(dtype);
  hasBias = bool(conv.getBias());
  hasScale = bool(conv.getScale());
  for (auto [value, vectorDtype, vectorEs] : {std::tuple{conv.getBias(), &biasDtype, &biasEs},
                                              {conv.getScale(), &scaleDtype, &scaleEs}})
    if (value) {
      *vectorDtype = deviceDType(cast<BufferType>(value.getType()).getElementType());
      *vectorEs = deviceDTypeBytes(*vectorDtype);
    }
  hasResidual = bool(conv.getResidual());
  relu = conv.getRelu();
  if (std::optional<APFloat> bound = conv.getReluMax())
    reluMax = bound->convertToDouble();
  return success();
}

// A grouped convolution's chunks read inputs of their own, so they are
// units too (down to a PT's rows); a dense one's share a band's rows.
int64_t ConvPlan::parallelUnits() const {
  return n * ho * (groups > 1 ? llvm::divideCeil(co, arch.ptRows) : 1);
}

LogicalResult ConvPlan::verifyTile(ArrayRef<int64_t> tile) const {
  SmallVector<int64_t> allowed = gatherings();
  if (tile.size() != 3 || tile[0] < 1 || tile[0] > ho || !validChunk(tile[1]) ||
      !llvm::is_contained(allowed, tile[2])) {
    auto diag = conv.emitError() << "spyre.tile of this convolution is [output rows of a band "
                                    "in [1, "
                                 << ho << "], output channels of a chunk in [1, " << co << "]";
    if (groups > 1)
      diag << " that is a multiple of " << cog << " (whole groups) and divides " << co
           << " or divides " << cog;
    diag << ", one of ";
    llvm::interleave(allowed, [&](int64_t g) { diag << g; }, [&] { diag << ", "; });
    return diag << " (0: a product per tap; 1: the taps gathered, copied out of the weights; 2: "
                   "gathered in the weights' own order; 3: as 1, in one product that writes "
                   "the result)]";
  }
  return success();
}

SmallVector<int64_t> ConvPlan::gatherings() const {
  // Strided taps are no shifted views of the rows: always gathered. One
  // tap of stride 1 has nothing to gather. Grouped weights are built in LX.
  SmallVector<int64_t> ways = strided() ? SmallVector<int64_t>{1, 2}
                              : kh * kw == 1 ? SmallVector<int64_t>{0}
                                             : SmallVector<int64_t>{0, 1, 2};
  if (groups > 1)
    llvm::erase(ways, 2);
  if (llvm::is_contained(ways, 1) && plainResult())
    ways.push_back(3);
  return ways;
}

SmallVector<LxSlot> ConvPlan::slots(ArrayRef<int64_t> tile) const {
  int64_t rows = tile[0], cb = tile[1], p = pitch(tile), q = runPitch(tile);
  // One chunk of weights stays loaded; several alternate in two copies.
  int64_t weightCopies = chunks(cb) > 1 ? 2 : 1;
  int64_t onesChannel = biasInProduct(tile) && !gathers(tile) ? 1 : 0, ci = chunkInputs(cb);
  return {{"input", ((ci + onesChannel) * inputRows(rows) * p + 2 * margin(tile)) * es, 2},
          {"weight", cb * weightPitch(tile) * es, weightCopies},
          {"taps", copiesTaps(tile) ? (gathers(tile) ? 1 : kh * kw) * cb * tapsPitch(tile) * es : 0,
           weightCopies},
          {"bias", (biasEs + scaleEs) * cb, weightCopies},
          {"accumulator", cb * run(rows, q) * 4, 2},
          {"residual", hasResidual ? cb * run(rows, q) * es : 0, 2},
          {"columns", gathers(tile) ? (kh * kw * ci + biasInProduct(tile)) * run(rows, q) * es : 0,
           writes(tile) ? 2 : 1}};
}

bool ConvPlan::fits(ArrayRef<int64_t> tile, int64_t lxBytes) const {
  int64_t total;
  assignLx(slots(tile), arch.stickBytes, total);
  return total <= lxBytes;
}

double ConvPlan::deviceBytes(int64_t rows, int64_t length, int64_t lxPitch) const {
  auto sticks = [&](int64_t elements) {
    return double(llvm::alignTo(elements * es, arch.stickBytes) + arch.stickBytes);
  };
  return oneRun(length, lxPitch) ? sticks(rows * length) : double(rows) * sticks(length);
}

ConvPlan::Rows ConvPlan::rowsOf(HwEmitter &em, int64_t lxAt, int64_t lxPitch,
                                int64_t lxChannel, Value buffer, int64_t deviceAt,
                                int64_t deviceChannel, int64_t rows, int64_t length,
                                int64_t channels) const {
  if (oneRun(length, lxPitch))
    return {em.lx(dtype, lxAt, {lxChannel * es, 0, 0}),
            em.device(buffer, dtype, deviceAt, {deviceChannel * es, 0, 0}), rows * length * es,
            {channels, 1, 1}};
  return {em.lx(dtype, lxAt, {lxPitch * es, lxChannel * es, 0}),
          em.device(buffer, dtype, deviceAt, {length * es, deviceChannel * es, 0}), length * es,
          {rows, channels, 1}};
}

double ConvPlan::gatherCycles(int64_t t0, int64_t t1, int64_t channels, int64_t length) const {
  if (!strided())
    return double(t1 - t0) * arch.sfuCycles(double(channels * length), 2 * es, false, false);
  // A copy per output row (the run is whole output rows), per channel or
  // per tap of each kernel row's taps.
  double cycles = 0, rows = double(length / wo);
  for (int64_t ta = t0; ta < t1;) {
    int64_t tb = std::min(t1, (ta / kw + 1) * kw);
    bool byChannel = copiesByChannel(ta, tb, channels);
    double copies = double(byChannel ? channels : tb - ta),
           each = double((byChannel ? tb - ta : channels) * wo);
    cycles += rows * copies * arch.sfuCycles(each, 2 * es, false, false);
    ta = tb;
  }
  return cycles;
}

std::pair<int64_t, double> ConvPlan::tapGroups(ArrayRef<int64_t> tile, int64_t cb,
                                                int64_t length) const {
  // Each group re-reads and re-writes the f32 accumulator (the first only
  // writes it), so more groups overlap more of the copies but stream more.
  // A group is some taps' channels, or with natural weights some channels'
  // taps (a copy per tap and group: more instructions). A product that
  // writes the result is one group, and writes the output's type.
  std::pair<int64_t, double> best = {1, 0.0};
  int64_t most = writes(tile) ? 1 : std::min<int64_t>(natural(tile) ? c : kh * kw, 4);
  for (int64_t numGroups = 1; numGroups <= most; ++numGroups) {
    double sfu = 0, pt = 0;
    for (int64_t g = 0; g < numGroups; ++g) {
      // A copy per tap of the group, each of the group's channels.
      auto [t0, t1] = natural(tile) ? std::pair<int64_t, int64_t>{0, kh * kw}
                                    : groupTaps(g, numGroups);
      auto [c0, c1] = natural(tile) ? groupChannels(g, numGroups)
                                    : std::pair<int64_t, int64_t>{0, chunkInputs(cb)};
      double k = double((t1 - t0) * (c1 - c0));
      sfu += gatherCycles(t0, t1, c1 - c0, length);
      pt = std::max(pt, sfu) + arch.ptCycles(double(cb), k, double(length),
                                             double(cb + length) * k * es,
                                             double(cb * length * (g > 0 ? 8
                                                                   : writes(tile) ? es
                                                                                  : 4)));
    }
    if (numGroups == 1 || pt < best.second)
      best = {numGroups, pt};
  }
  return best;
}

std::pair<double, double> ConvPlan::distinctLoads(ArrayRef<int64_t> tile, int64_t cores) const {
  int64_t total = units(tile), numChunks = chunks(tile[1]),
          steps = llvm::divideCeil(total, cores);
  bool ownInputs = chunkInputs(tile[1]) < c; // a grouped chunk reads its own channels
  double weightSum = 0, inputSum = 0;
  for (int64_t t = 0; t < steps; ++t) {
    llvm::SmallDenseSet<int64_t> chunksLoaded, inputsLoaded;
    for (int64_t core = 0; core < cores; ++core) {
      auto [first, count] = coreUnits(total, core, cores);
      if (t >= count)
        continue;
      int64_t unit = first + t;
      chunksLoaded.insert(unit % numChunks);
      inputsLoaded.insert(ownInputs ? unit : unit / numChunks);
    }
    weightSum += double(chunksLoaded.size());
    inputSum += double(inputsLoaded.size());
  }
  return {weightSum / double(steps), inputSum / double(steps)};
}

double ConvPlan::estimate(ArrayRef<int64_t> tile, int64_t cores) const {
  // Every active core moves its unit's transfers at about the same time,
  // sharing the bus (rows count whole sticks, as the card moves them); a
  // core's units overlap one's compute with the next one's transfers. Its
  // units run chunk by chunk within a band, so a dense band's rows load
  // once (a grouped chunk's are its own).
  int64_t rows = std::min(tile[0], ho), cb = tile[1], p = pitch(tile), q = runPitch(tile),
          length = run(rows, q), ci = chunkInputs(cb);
  double active = double(std::min(cores, units(tile))),
         perCore = double(llvm::divideCeil(units(tile), cores));
  auto [weightReads, inputReads] = distinctLoads(tile, cores);
  bool oneChunk = chunks(cb) == 1;
  double bw = arch.deviceBytesPerCycle();
  double bandsPerCore = ci < c ? perCore : std::max(1.0, perCore / double(chunks(cb)));
  double inBytes = inputReads * double(ci) * deviceBytes(inputRows(rows), w, p);
  double outBytes = double(cb) * deviceBytes(rows, wo, q);
  double input = inBytes / bw, residual = hasResidual ? active * outBytes / bw : 0;
  // The card pays the read/write turnaround on the fewer of the bytes read
  // and written (SPYRE_HW.md).
  double readBytes = inBytes * bandsPerCore / perCore + (hasResidual ? active * outBytes : 0);
  double store = active * outBytes / bw +
                 arch.turnaroundCyclesPerByte() * std::min(active * outBytes, readBytes);
  // The weights, and their taps copied out on the SFU. One chunk's are
  // read by every core at once (the card reads them once) in a step of
  // their own, whose copies overlap the first rows' load; several chunks'
  // come with each unit.
  double weights = double(kh * kw * cb * cg * es) / bw, taps = 0;
  if (copiesTaps(tile))
    taps = double(kh * kw) * arch.sfuCycles(double(cb * ci), 2 * es, false, false);
  // A core's DMA engine runs one transfer at a time, each first waiting
  // out the memory's latency.
  double latency = double(arch.dmaLatencyCycles);
  double load = (input + latency) * bandsPerCore / perCore +
                (hasResidual ? residual + latency : 0) +
                (oneChunk ? 0 : weightReads * weights + latency * (1 + hasBias + hasScale));
  store += latency;
  double start = oneChunk ? weights + latency * (1 + hasBias + hasScale) +
                                std::max(taps, input + residual + latency * (1 + hasResidual))
                          : load + (input + latency) * (1 - bandsPerCore / perCore);
  // A product per tap (each reads and writes the accumulator), or the
  // columns' copies and a product per group of taps.
  double compute = oneChunk ? 0 : taps;
  if (writes(tile)) {
    // The SFU's copies of a unit's taps (and its weights') run beside the
    // previous unit's product: a unit costs the longer of the two, and the
    // first unit's copies (or the last one's product) the shorter once.
    // But unit t + 2's loads follow unit t's product and store, and its
    // copies its loads: from the third unit on, two units take at least
    // that chain.
    double gathered = gatherCycles(0, kh * kw, ci, length);
    double sfu = compute + gathered, pt = tapGroups(tile, cb, length).second - gathered;
    double unit = std::max(sfu, pt), chain = (sfu + pt + load + store) / 2;
    return start + std::min(sfu, pt) + perCore * unit +
           std::max(0.0, perCore - 2) * std::max(0.0, chain - unit) + store;
  }
  if (gathers(tile))
    compute += tapGroups(tile, cb, length).second;
  else
    compute += double(kh * kw) * arch.ptCycles(double(cb), double(ci), double(length),
                                                double((cb + length) * ci * es),
                                                double(cb * length * 8));
  // The epilogue's SFU passes over the f32 sums (the scale's, the bias's
  // when not in the product, the residual's, then the ReLU's or a copy),
  // the last writing the 16-bit result (a broadcast scale or bias streams
  // nothing per element).
  int64_t vectorPasses = int64_t(hasScale) + int64_t(hasBias && !biasInProduct(tile));
  int64_t passes = vectorPasses + int64_t(hasResidual) +
                   (relu || !(vectorPasses || hasResidual)) + int64_t(reluMax.has_value());
  for (int64_t pass = 0; pass < passes; ++pass) {
    bool residualPass = hasResidual && pass == vectorPasses;
    double bytes = 4 + (residualPass ? es : 0) + (pass + 1 == passes ? es : 4);
    compute += arch.sfuCycles(double(cb * length), bytes, false, false);
  }
  return start + perCore * compute + (perCore - 1) * std::max(0.0, load + store - compute) +
         store;
}

SmallVector<int64_t> ConvPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  // Chunks from the most output channels whose weights fit beside the rows
  // down to a PT's rows (several chunks per band give a core units to
  // overlap), and every band height that fits: the busiest core's estimate
  // decides. Taller bands feed the PT longer runs and read fewer rows
  // twice; shorter ones spread over more cores. A grouped convolution's
  // chunks are whole groups dividing the channels: every such width that
  // fits, down to a PT's rows (or the widest there is).
  SmallVector<int64_t> gatherings = this->gatherings();
  int64_t leanest = gatherings.front();
  SmallVector<int64_t> chunkSizes;
  if (groups == 1) {
    int64_t largest = co;
    while (largest > 1 && !fits({1, largest, leanest}, lxBytes))
      largest = llvm::divideCeil(largest, 2);
    chunkSizes.push_back(largest);
    while (chunkSizes.back() > arch.ptRows)
      chunkSizes.push_back(std::max<int64_t>(arch.ptRows, llvm::divideCeil(chunkSizes.back(), 2)));
    // And the multiples of the PT's rows that divide the channels: halving
    // 144 gives 9, whose chunks' 9-channel output rows and weights move
    // worse than 8 or 16 (MobileNetV2's 1 x 1 expansion to 144 channels:
    // 21.0 us in chunks of 9, 14.6 in chunks of 16).
    for (int64_t cb = arch.ptRows; cb < largest; cb += arch.ptRows)
      if (co % cb == 0 && !llvm::is_contained(chunkSizes, cb))
        chunkSizes.push_back(cb);
  } else {
    for (int64_t cb = co; cb >= 1; --cb)
      if (validChunk(cb) && fits({1, cb, leanest}, lxBytes) &&
          (cb >= arch.ptRows || chunkSizes.empty()))
        chunkSizes.push_back(cb);
  }
  if (chunkSizes.empty() || !fits({1, chunkSizes.front(), leanest}, lxBytes))
    return {};
  SmallVector<int64_t> best = {1, chunkSizes.front(), leanest};
  double bestCycles = estimate(best, cores);
  for (int64_t cb : chunkSizes)
    for (int64_t gather : gatherings) {
      for (int64_t rows = 1; rows <= ho && fits({rows, cb, gather}, lxBytes); ++rows) {
        double cycles = estimate({rows, cb, gather}, cores);
        if (cycles <= bestCycles) {
          best = {rows, cb, gather};
          bestCycles = cycles;
        }
      }
    }
  return best;
}

LogicalResult ConvPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                              ArrayRef<int64_t> lx) const {
  const int64_t band = tile[0], cb = tile[1], ci = chunkInputs(cb);
  const bool gather = gathers(tile);
  // Where tap t's Cb x Ci weights start in the taps slot (elements), and
  // the column of the taps (or of natural weights) that holds the bias.
  const int64_t tapsPitch = this->tapsPitch(tile);
  auto tapAt = [&](int64_t tap) { return gather ? tap * ci : tap * cb * tapsPitch; };
  const int64_t biasColumn = gather ? kh * kw * ci : ci;
  SmallVector<LxSlot> slotList = slots(tile);
  auto slotAt = [&](Slot s, int64_t copy) { return lx[s] + copy * slotList[s].bytes; };
  // The scale follows the bias in its slot.
  auto scaleAt = [&](int64_t copy) { return slotAt(kBias, copy) + cb * biasEs; };
  const int64_t bands = llvm::divideCeil(ho, band), numChunks = chunks(cb);
  const int64_t p = pitch(tile), q = runPitch(tile), edge = margin(tile);
  const int64_t channelPitch = inputRows(band) * p; // elements between input channels in LX
  const int64_t accPitch = run(band, q);            // elements between output channels
  const uint8_t f32 = uint8_t(ISA::DType::f32);
  const int64_t total = n * bands * numChunks;
  Location loc = conv.getLoc();
  // One chunk's weights stay loaded for the whole op: a step of their own
  // comes first, so that the SFU copies their taps out while the first
  // rows arrive, and every core reads them in the same cycle (the card
  // then reads them once).
  const bool weightsFirst = numChunks == 1 && preparesWeights(tile);
  const bool nat = natural(tile);
  const int64_t taps = kh * kw, wPitch = weightPitch(tile);
  const int64_t numGroups = gather ? tapGroups(tile, cb, accPitch).first : 1;

  // Every step names its instructions' dependencies (StepCompute's
  // explicit style): SFU work waits for nothing but the SFU's earlier work,
  // so that it runs beside the PT's products of earlier taps.
  auto zero = [&](StepCompute &sc, int64_t at, int64_t rowStride, int64_t r, int64_t cols) {
    sc.add(HwFillOp::create(sc.b(), loc, em.lx(dtype, at, {rowStride, es, 0}), APFloat(0.0),
                            APFloat(0.0), APFloat(0.0), r, cols, nullptr, 0, nullptr, nullptr),
           nullptr);
  };
  auto copy = [&](StepCompute &sc, int64_t dst, std::array<int64_t, 3> dstStrides, int64_t src,
                  std::array<int64_t, 3> srcStrides, int64_t r, int64_t cols) {
    sc.add(HwUnaryOp::create(sc.b(), loc, "copy", em.lx(dtype, dst, dstStrides),
                             em.lx(dtype, src, srcStrides), r, cols, nullptr, 0, nullptr,
                             nullptr),
           nullptr);
  };
  // The loads of chunk `o0`'s weights (and bias) into copy `wCopy`.
  auto loadWeights = [&](TileStep &step, int64_t wCopy, int64_t o0, int64_t channels) {
    int64_t row = cg * kh * kw;
    if (wPitch == row)
      step.loads.push_back({em.lx(dtype, slotAt(kWeight, wCopy)),
                            em.device(conv.getWeight(), dtype, o0 * row * es), channels * row * es});
    else // rows one longer in LX, for the bias's column
      step.loads.push_back({em.lx(dtype, slotAt(kWeight, wCopy), {wPitch * es, 0, 0}),
                            em.device(conv.getWeight(), dtype, o0 * row * es, {row * es, 0, 0}),
                            row * es, {channels, 1, 1}});
    if (hasBias)
      step.loads.push_back({em.lx(biasDtype, slotAt(kBias, wCopy)),
                            em.device(conv.getBias(), biasDtype, o0 * biasEs),
                            channels * biasEs});
    if (hasScale)
      step.loads.push_back({em.lx(scaleDtype, scaleAt(wCopy)),
                            em.device(conv.getScale(), scaleDtype, o0 * scaleEs),
                            channels * scaleEs});
  };
  // The SFU's copies of the loaded weights' taps, each a Cb x C matrix,
  // and of the bias into its column (one dense tap without bias needs
  // none: the loaded weights are its matrix).
  auto copyTaps = [&](StepCompute &sc, int64_t wCopy, int64_t o0, int64_t channels) {
    int64_t wAt = slotAt(kWeight, wCopy), tapsAt = slotAt(kTaps, wCopy);
    if (nat) {
      copy(sc, wAt + biasColumn * es, {wPitch * es, es, 0}, slotAt(kBias, wCopy), {es, es, 0},
           channels, 1);
      return;
    }
    if (denseChunk(cb)) {
      // Tap (i, j): every (kh * kw)-th element of the loaded weights, from
      // its own.
      for (int64_t tap = 0; tap < kh * kw; ++tap)
        copy(sc, tapsAt + tapAt(tap) * es, {tapsPitch * es, es, 0}, wAt + tap * es,
             {cg * kh * kw * es, kh * kw * es, 0}, channels, cg);
    } else {
      // Grouped: zeros, then for each tap and each row r of a group's
      // block, that row of every group of the chunk (output channel
      // g * cog + r reads input channels g * cg ...).
      zero(sc, tapsAt, tapsPitch * es, gather ? cb : kh * kw * cb, tapsPitch);
      for (int64_t tap = 0; tap < kh * kw; ++tap)
        for (int64_t r = 0; r < cog; ++r) {
          int64_t g0 = llvm::divideCeil(std::max<int64_t>(0, o0 - r), cog);
          int64_t g1 = (o0 + channels - 1 - r) / cog;
          if (o0 + channels - 1 < r || g1 < g0)
            continue;
          int64_t row = g0 * cog + r - o0;
          copy(sc, tapsAt + (tapAt(tap) + row * tapsPitch + (g0 - o0 / cog) * cg) * es,
               {(cog * tapsPitch + cg) * es, es, 0}, wAt + (row * cg * kh * kw + tap) * es,
               {cog * cg * kh * kw * es, kh * kw * es, 0}, g1 - g0 + 1, cg);
        }
    }
    if (biasInProduct(tile))
      copy(sc, tapsAt + biasColumn * es, {tapsPitch * es, es, 0}, slotAt(kBias, wCopy),
           {es, es, 0}, channels, 1);
  };
  // What is written once per core and never overwritten: the padding
  // columns of both copies of the input rows (loads write only the W
  // columns between them), and the ones that multiply the bias (the row
  // under the gathered columns, or the channel after the input rows in both
  // copies).
  auto prepareSlots = [&](StepCompute &sc) {
    for (int64_t copy = 0; copy < 2 && p != w; ++copy) {
      int64_t at = slotAt(kInput, copy), lines = ci * inputRows(band);
      if (pw > 0)
        zero(sc, at, wp * es, lines, pw);
      if (pwAfter > 0)
        zero(sc, at + (pw + w) * es, wp * es, lines, pwAfter);
    }
    auto ones = [&](int64_t at, int64_t count) {
      sc.add(HwFillOp::create(sc.b(), loc, em.lx(dtype, at, {count * es, es, 0}), APFloat(1.0),
                              APFloat(0.0), APFloat(0.0), 1, count, nullptr, 0, nullptr, nullptr),
             nullptr);
    };
    for (int64_t copy = 0; copy < (writes(tile) ? 2 : 1) && biasInProduct(tile) && gather; ++copy)
      ones(slotAt(kColumns, copy) + kh * kw * ci * accPitch * es, accPitch);
    for (int64_t copy = 0; copy < 2 && biasInProduct(tile) && !gather; ++copy)
      ones(slotAt(kInput, copy) + ci * channelPitch * es, channelPitch);
  };
  const bool prepares = p != w || biasInProduct(tile);
  const int64_t bias = biasInProduct(tile) ? 1 : 0; // the bias's row of K

  for (int64_t core = 0; core < cores; ++core) {
    // (Named variables: a lambda below captures `first`.)
    int64_t first, count;
    std::tie(first, count) = coreUnits(total, core, cores);
    if (count == 0)
      continue;
    // Units run chunk by chunk within a band, so that a band's rows stay
    // loaded while its chunks pass.
    SlotCopies inputs, weights;
    auto unitStep = [&, first](int64_t t) {
      int64_t unit = first + t;
      int64_t image = unit / (bands * numChunks), b = unit / numChunks % bands,
              chunk = unit % numChunks;
      int64_t y0 = b * band, rows = std::min(band, ho - y0);
      int64_t o0 = chunk * cb, channels = std::min(cb, co - o0);
      int64_t length = run(rows, q), tileRows = inputRows(rows);
      // A grouped chunk's input channels are its groups'.
      int64_t ci0 = o0 / cog * cg;
      auto [inCopy, inNew] = inputs.use({image, b, ci < c ? chunk : 0}, t);
      auto [wCopy, wNew] = weightsFirst ? std::pair<int64_t, bool>{0, false}
                                        : weights.use({chunk, 0, 0}, t);
      // Without tap copies (natural weights, or one dense tap without the
      // bias) the loaded weights are the product's left operand.
      int64_t inAt = slotAt(kInput, inCopy) + edge * es, wAt = slotAt(kWeight, wCopy),
              tapsAt = copiesTaps(tile) ? slotAt(kTaps, wCopy) : wAt,
              accAt = slotAt(kAcc, t % 2), resAt = slotAt(kResidual, t % 2);
      // The input rows [top, top + tileRows) of the band, those inside the
      // image from `from` to `to`.
      int64_t top = y0 * sh - ph, from = std::max<int64_t>(0, top),
              to = std::min(h, top + tileRows);

      TileStep step;
      if (wNew)
        loadWeights(step, wCopy, o0, channels);
      if (inNew && to > from) {
        Rows in = rowsOf(em, inAt + ((from - top) * p + (p == w ? 0 : pw)) * es, p, channelPitch,
                         conv.getInput(), ((image * c + ci0) * h + from) * w * es, h * w,
                         to - from, w, ci);
        step.loads.push_back({in.local, in.device, in.rowBytes, in.counts});
      }
      // Output row r of the band is the run's elements from r * pitch on.
      // A residual band is laid out as the output.
      auto outputRows = [&](Value buffer, int64_t at) {
        return rowsOf(em, at, q, accPitch, buffer, ((image * co + o0) * ho + y0) * wo * es,
                      ho * wo, rows, wo, channels);
      };
      if (hasResidual) {
        Rows residual = outputRows(conv.getResidual(), resAt);
        step.loads.push_back({residual.local, residual.device, residual.rowBytes, residual.counts});
      }
      Rows out = outputRows(conv.getTarget(), accAt);
      step.stores.push_back({out.device, out.local, out.rowBytes, out.counts});

      bool prepare = t == 0 && prepares && !weightsFirst, newWeights = wNew && preparesWeights(tile);
      int64_t zeroAbove = inNew ? std::min(from, top + tileRows) - top : 0;
      int64_t zeroBelow = inNew ? top + tileRows - std::max(to, from) : 0;
      if (inNew && to <= from)
        zeroAbove = tileRows, zeroBelow = 0;
      step.compute = [=, this, &em](StepCompute &sc) {
        OpBuilder &builder = sc.b();
        if (newWeights)
          copyTaps(sc, wCopy, o0, channels);
        if (prepare)
          prepareSlots(sc);
        // Rows above and below the image read zeros; a previous band may
        // have left data there.
        if (zeroAbove > 0)
          zero(sc, inAt, channelPitch * es, ci, zeroAbove * p);
        if (zeroBelow > 0)
          zero(sc, inAt + (tileRows - zeroBelow) * p * es, channelPitch * es, ci, zeroBelow * p);
        // Tap (i, j)'s view of the input rows: its C rows of the run.
        auto shifted = [&](int64_t i, int64_t j) {
          return inAt + (i * dh * p + j * dw - edge) * es;
        };
        // The f32 sums, or the result when the product writes it.
        RefAttr accView = writes(tile) ? em.lx(dtype, accAt, {accPitch * es, 0, 0})
                                       : em.lx(f32, accAt, {accPitch * 4, 0, 0});
        // The SFU instruction emitted last, which a product then waits for.
        auto lastSfu = [&]() -> Operation * {
          return sc.ops().empty() || isa<HwMatmulOp>(sc.ops().back()) ? nullptr
                                                                        : sc.ops().back();
        };
        Operation *product = nullptr;
        if (gather) {
          // Rows of the column block (and columns of the left operand):
          // (channel, tap) for natural weights, else (tap, channel). A group
          // is a run of them: some channels' taps, or some taps' channels.
          int64_t columnsAt = slotAt(kColumns, writes(tile) ? t % 2 : 0);
          auto blockRow = [&](int64_t channel, int64_t tap) {
            return nat ? channel * taps + tap : tap * ci + channel;
          };
          const int64_t channelStride = (nat ? taps : 1) * accPitch; // block rows of a tap
          for (int64_t g = 0; g < numGroups; ++g) {
            auto [t0, t1] = nat ? std::pair<int64_t, int64_t>{0, taps} : groupTaps(g, numGroups);
            auto [c0, c1] = nat ? groupChannels(g, numGroups) : std::pair<int64_t, int64_t>{0, ci};
            for (int64_t tap = t0; tap < t1 && !strided(); ++tap)
              copy(sc, columnsAt + blockRow(c0, tap) * accPitch * es,
                   {channelStride * es, es, 0},
                   shifted(tap / kw, tap % kw) + c0 * channelPitch * es,
                   {channelPitch * es, es, 0}, c1 - c0, length);
            // Strided: output row y's positions are every sw-th column of
            // input row y * sh + i * dh. Each kernel row's taps are copied
            // for the group's channels at once, or each channel's for the
            // row's taps at once (tap j reads dw further along the row).
            const int64_t tapStride = nat ? 1 : ci; // block rows of a channel's next tap
            for (int64_t ta = t0; ta < t1 && strided();) {
              int64_t i = ta / kw, tb = std::min(t1, (i + 1) * kw);
              bool byChannel = copiesByChannel(ta, tb, c1 - c0);
              for (int64_t y = 0; y < rows; ++y) {
                int64_t at = columnsAt + (blockRow(c0, ta) * accPitch + y * wo) * es;
                int64_t from =
                    inAt + (c0 * channelPitch + (y * sh + i * dh) * p + ta % kw * dw) * es;
                if (byChannel)
                  for (int64_t ch = 0; ch < c1 - c0; ++ch)
                    copy(sc, at + ch * channelStride * es, {tapStride * accPitch * es, es, 0},
                         from + ch * channelPitch * es, {dw * es, sw * es, 0}, tb - ta, wo);
                else
                  for (int64_t tap = ta; tap < tb; ++tap)
                    copy(sc, at + (tap - ta) * tapStride * accPitch * es,
                         {channelStride * es, es, 0}, from + (tap - ta) * dw * es,
                         {channelPitch * es, sw * es, 0}, c1 - c0, wo);
              }
              ta = tb;
            }
            // Packed rows: the positions whose view wrapped into the row
            // before (a tap left of centre reads the previous row's last
            // columns) or after read the padding instead: zeros, a whole
            // row where the tap reaches past it (a dilated tap of an image
            // narrower than its reach). A block row's output rows are W
            // apart (the run is whole rows), and so are all of a tap's when
            // its channels' rows follow one another.
            for (int64_t tap = t0; edge > 0 && tap < t1; ++tap) {
              int64_t shift = tap % kw * dw - pw, cols = std::min(std::abs(shift), w);
              if (shift == 0)
                continue;
              int64_t at = columnsAt + (blockRow(c0, tap) * accPitch + (shift < 0 ? 0 : w - cols)) * es;
              if (!nat)
                zero(sc, at, w * es, (c1 - c0) * band, cols);
              for (int64_t y = 0; nat && y < band; ++y)
                zero(sc, at + y * w * es, channelStride * es, c1 - c0, cols);
            }
            int64_t k0 = blockRow(c0, t0), k = (c1 - c0) * (t1 - t0);
            product = sc.add(
                HwMatmulOp::create(
                    builder, loc, accView, em.lx(dtype, tapsAt + k0 * es, {tapsPitch * es, 0, 0}),
                    em.lx(dtype, columnsAt + k0 * accPitch * es, {accPitch * es, 0, 0}), channels,
                    k + (g + 1 == numGroups ? bias : 0), length, false, false, g > 0, nullptr, 0,
                    nullptr, nullptr),
                lastSfu());
          }
        } else {
          for (int64_t tap = 0; tap < kh * kw; ++tap)
            product = sc.add(
                HwMatmulOp::create(builder, loc, accView,
                                   em.lx(dtype, tapsAt + tapAt(tap) * es, {tapsPitch * es, 0, 0}),
                                   em.lx(dtype, shifted(tap / kw, tap % kw),
                                         {channelPitch * es, 0, 0}),
                                   channels, ci + (tap == 0 ? bias : 0), length, false, false,
                                   tap > 0, nullptr, 0, nullptr, nullptr),
                lastSfu());
        }
        if (writes(tile))
          return;
        // The epilogue in f32 on the accumulator; its last instruction
        // writes the 16-bit result in place: element e goes to byte 2e,
        // after f32 element e / 2 <= e has been read.
        RefAttr result = em.lx(dtype, accAt, {accPitch * es, es, 0});
        RefAttr acc = em.lx(f32, accAt, {accPitch * 4, 4, 0});
        // Each channel's scale first (a row of the slot per channel, as the
        // bias), then the addends.
        SmallVector<std::pair<StringRef, RefAttr>> passes;
        if (hasScale)
          passes.push_back({"mul", em.lx(scaleDtype, scaleAt(wCopy), {scaleEs, 0, 0})});
        if (hasBias && !bias)
          passes.push_back({"add", em.lx(biasDtype, slotAt(kBias, wCopy), {biasEs, 0, 0})});
        if (hasResidual)
          passes.push_back({"add", em.lx(dtype, resAt, {accPitch * es, es, 0})});
        for (auto [k, pass] : llvm::enumerate(passes)) {
          bool lastOp = k + 1 == passes.size() && !relu;
          sc.add(HwBinaryOp::create(builder, loc, pass.first, lastOp ? result : acc, acc,
                                    pass.second, FloatAttr(), channels, length, nullptr, 0,
                                    nullptr, nullptr),
                 std::exchange(product, nullptr));
        }
        Operation *last = nullptr;
        if (relu || passes.empty())
          last = sc.add(HwUnaryOp::create(builder, loc, relu ? "relu" : "copy",
                                          reluMax ? acc : result, acc, channels, length, nullptr,
                                          0, nullptr, nullptr),
                        product);
        if (reluMax)
          sc.add(HwBinaryOp::create(builder, loc, "min", result, acc, Attribute(),
                                    builder.getF64FloatAttr(*reluMax), channels, length, nullptr,
                                    0, nullptr, nullptr),
                 last);
      };
      return step;
    };
    auto stepAt = [&](int64_t t) {
      if (!weightsFirst)
        return unitStep(t);
      if (t > 0)
        return unitStep(t - 1);
      TileStep step;
      loadWeights(step, 0, 0, co);
      step.compute = [&](StepCompute &sc) {
        copyTaps(sc, 0, 0, co);
        if (prepares)
          prepareSlots(sc);
      };
      return step;
    };
    em.pipeline(core, loc, count + weightsFirst, stepAt);
  }
  return success();
}

} // namespace

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeConvPlan(Conv2dOp op,
                                                            const ::spyre::Arch &arch) {
  return analyzedPlan<ConvPlan>(op, arch);
}
