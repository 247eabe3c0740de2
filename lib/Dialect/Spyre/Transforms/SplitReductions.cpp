//===- SplitReductions.cpp - reductions with too few outputs for the cores ===//
//
// Every reduction tile of one output stays on one core (GenericPlan), so a
// reduction with fewer output tiles than cores leaves cores idle: x.sum()
// ran on one core at a ninth of the bus, a mean-squared error over 16M
// elements took 15x its memory bound. Such a generic is cut into S parts
// of its reduced loop, each reduced into a temporary of partial results
// (one per part and output), which a second generic combines:
//
//   partial[s, p...] = combine over r in [s*R/S, (s+1)*R/S) of body(...)
//   out[...]         = combine over s of partial[s, p...]
//
// The partials keep the accumulator's type (f32 for a 16-bit float sum or
// product, whose accumulator is f32): a third generic rounds the combined
// f32 value to the output once, as the uncut reduction did on its store.
//
// A reduction over several loops is collapsed first the same way: the
// reduced loops but GenericPlan's `col` become parallel loops of the
// partials' generic, which reduces along `col` only, and the combine
// reduces each output's row of partials (Welford states merged as Chan et
// al. do). GenericPlan would step those loops one point at a time, on as
// many cores as there are outputs.
//
//===----------------------------------------------------------------------===//

#include "GenericPlan.h"
#include "Linearize.h"
#include "PlanKinds.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "spyre-mlir/Isa/Isa.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYRESPLITREDUCTIONS
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

namespace {

/// Points of a plain reduction below which a second op's barrier and
/// latency cost more than the idle cores; a reduction whose body computes
/// more per point is cut from as much vector work as that (partsFor).
constexpr int64_t kMinPoints = 1 << 16;
/// Fewest reduced points per part.
constexpr int64_t kMinPart = 1024;

bool isNarrowFloat(Type t) { return isa<FloatType>(t) && t.getIntOrFloatBitWidth() < 32; }

struct SplitReductions : mlir::spyre::impl::SpyreSplitReductionsBase<SplitReductions> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<::spyre::Arch> arch = getArch(module);
    if (!arch)
      return signalPassFailure();
    FailureOr<int64_t> available = coresToUse(module, *arch, cores);
    if (failed(available))
      return signalPassFailure();
    module.walk([&](KernelOp kernel) {
      for (auto generic : llvm::to_vector(kernel.getBody().front().getOps<GenericOp>())) {
        // A collapsed reduction's partials may still be too few rows for
        // the cores: the generic reducing along `col` is cut in turn.
        if (int col = collapsibleColumn(generic); col >= 0)
          generic = collapse(generic, unsigned(col));
        if (int64_t parts = partsFor(generic, *arch, *available); parts > 1)
          split(generic, parts);
      }
    });
  }

  /// How many parts to cut `generic`'s reduced loop into: 1 to leave it.
  static int64_t partsFor(GenericOp generic, const ::spyre::Arch &arch, int64_t cores) {
    if (generic->hasAttr(kCoresAttr) || !generic.getSymbols().empty() ||
        !generic.getDomainSizes().empty())
      return 1;
    SmallVector<unsigned> reduced = generic.getReductionLoops();
    SmallVector<CombinerKind> kinds = generic.getCombinerKinds();
    if (reduced.size() != 1 || kinds.size() != 1 || generic.getOutputs().size() != 1 ||
        cast<BufferType>(generic.getOutputs()[0].getType()).getRank() == 0)
      return 1;
    // Floats, and booleans for any and all (T5's check for an infinity in
    // an fp16 layer: 177.5 us on one core): integer sums saturate on the
    // card, so another order of the adds could give another answer. A given
    // schedule is kept.
    auto yield = cast<YieldOp>(generic.getBody().front().getTerminator());
    Type yielded = yield.getValues()[0].getType();
    bool floats = isa<FloatType>(yielded) &&
                  llvm::is_contained({CombinerKind::sum, CombinerKind::prod, CombinerKind::max,
                                      CombinerKind::min},
                                     kinds[0]);
    bool booleans = yielded.isInteger(1) &&
                    llvm::is_contained({CombinerKind::any, CombinerKind::all}, kinds[0]);
    if (!(floats || booleans) || generic->hasAttr(kTileAttr))
      return 1;
    // The partials have a dimension more than the parallel loops.
    if (int64_t(generic.getStaticDomain().size()) > ISA::kMaxRank)
      return 1;
    ArrayRef<int64_t> domain = generic.getStaticDomain();
    int64_t r = domain[reduced[0]];
    if (r < 2 * kMinPart)
      return 1;
    // An op the card cannot run is spyre-divide-work's to report.
    ScopedDiagnosticHandler silence(generic.getContext(), [](Diagnostic &) { return success(); });
    FailureOr<std::unique_ptr<OpPlan>> plan = makeGenericPlan(generic, arch);
    if (failed(plan))
      return 1;
    auto &generics = static_cast<GenericPlan &>(**plan);
    // The work, not the points: a sampling step's masked minimum over 32,000
    // scores computes five operations a point on one core (19 us).
    if (generics.sfuCycles(1) < double(kMinPoints) / arch.sfuRate(0, true, false))
      return 1;
    SmallVector<int64_t> tile = generics.chooseTile(cores, arch.lxUsableBytes());
    if (tile.empty())
      return 1;
    int64_t tiles = generics.parallelTiles(tile, -1);
    if (2 * tiles > cores)
      return 1;
    // The most parts up to what fills the cores that divide the loop evenly.
    for (int64_t parts = cores / tiles; parts >= 2; --parts)
      if (r % parts == 0 && r / parts >= kMinPart)
        return parts;
    return 1;
  }

  static void split(GenericOp generic, int64_t parts) {
    OpBuilder b(generic);
    ArrayRef<int64_t> domain = generic.getStaticDomain();
    unsigned n = domain.size(), red = generic.getReductionLoops()[0];
    int64_t part = domain[red] / parts;
    SmallVector<unsigned> kept; // the parallel loops, in order
    for (unsigned i = 0; i < n; ++i)
      if (i != red)
        kept.push_back(i);
    // Part s of the reduced loop: loop 0 is s, loop i + 1 the old loop i,
    // the reduced one now `part` long and offset by s * part. Partials:
    // [parts, the parallel loops' sizes...].
    SmallVector<int64_t> firstDomain{parts};
    SmallVector<AffineExpr> oldLoops;
    SmallVector<bool> reduced{false};
    for (unsigned i = 0; i < n; ++i) {
      firstDomain.push_back(i == red ? part : domain[i]);
      oldLoops.push_back(i == red ? b.getAffineDimExpr(0) * part + b.getAffineDimExpr(i + 1)
                                  : b.getAffineDimExpr(i + 1));
      reduced.push_back(i == red);
    }
    SmallVector<AffineExpr> partialIndex{b.getAffineDimExpr(0)};
    for (unsigned i : kept)
      partialIndex.push_back(b.getAffineDimExpr(i + 1));
    reduceInTwo(generic, kept, firstDomain, reduced, oldLoops, partialIndex, parts,
                /*countFirst=*/true);
  }

  /// A reduction over several loops: GenericPlan keeps the one its first
  /// input is densest along (`col`) and steps the others one point at a
  /// time, on as many cores as there are outputs, so a GroupNorm's
  /// statistics over 128 channels of 2 x 2 positions (a per-channel operand
  /// keeps Inductor from flattening them) ran 128 steps of 4 elements per
  /// image, each paying every input's DMA latency: 321 us for 1024
  /// elements; over 64 channels of 56 x 56 positions, 151 us on one core.
  /// Returns the reduced loop to keep, or -1 to leave the op.
  static int collapsibleColumn(GenericOp generic) {
    if (generic->hasAttr(kCoresAttr) || generic->hasAttr(kTileAttr) ||
        !generic.getSymbols().empty() || !generic.getDomainSizes().empty())
      return -1;
    SmallVector<CombinerKind> kinds = generic.getCombinerKinds();
    if (kinds.size() != 1 ||
        !llvm::is_contained({CombinerKind::sum, CombinerKind::prod, CombinerKind::max,
                             CombinerKind::min, CombinerKind::welford},
                            kinds[0]))
      return -1;
    auto yield = cast<YieldOp>(generic.getBody().front().getTerminator());
    if (!isa<FloatType>(yield.getValues()[0].getType()))
      return -1;
    // Welford's partial states merge in f32 (welfordInTwo).
    if (kinds[0] == CombinerKind::welford &&
        !llvm::all_of(generic.getOutputs(), [](Value out) {
          return cast<BufferType>(out.getType()).getElementType().isF32();
        }))
      return -1;
    ArrayRef<int64_t> domain = generic.getStaticDomain();
    SmallVector<unsigned> reduced;
    for (unsigned i : generic.getReductionLoops())
      if (domain[i] > 1)
        reduced.push_back(i);
    if (reduced.size() < 2 || int64_t(domain.size()) > ISA::kMaxRank)
      return -1;
    // The reduced loop the first input is densest along, else the last.
    int col = int(reduced.back());
    std::string why;
    std::optional<LinearAccess> first =
        generic.getInputs().empty()
            ? std::nullopt
            : linearize(generic.getInputMap(0),
                        cast<BufferType>(generic.getInputs()[0].getType()), why);
    if (first) {
      std::optional<int64_t> best;
      for (unsigned i : reduced) {
        int64_t stride = std::abs(first->strides[i]);
        if (stride && (!best || stride < *best)) {
          best = stride;
          col = int(i);
        }
      }
    }
    return col;
  }

  /// The reduced loops but `col` become parallel loops of a first generic
  /// that reduces along `col` only, into partials [the parallel loops...,
  /// the other reduced loops flattened]; a second combines those, a
  /// contiguous row per output.
  static GenericOp collapse(GenericOp generic, unsigned col) {
    OpBuilder b(generic);
    ArrayRef<int64_t> domain = generic.getStaticDomain();
    unsigned n = domain.size();
    SmallVector<unsigned> reductionLoops = generic.getReductionLoops();
    // Reduced loops of size 1 stay reduced: they fold nothing.
    SmallVector<unsigned> kept, folded;
    SmallVector<bool> reduced;
    SmallVector<AffineExpr> oldLoops;
    for (unsigned i = 0; i < n; ++i) {
      bool reducedLoop = llvm::is_contained(reductionLoops, i);
      reduced.push_back(i == col || (reducedLoop && domain[i] == 1));
      if (!reduced.back())
        (reducedLoop ? folded : kept).push_back(i);
      oldLoops.push_back(b.getAffineDimExpr(i));
    }
    SmallVector<AffineExpr> partialIndex;
    for (unsigned i : kept)
      partialIndex.push_back(b.getAffineDimExpr(i));
    AffineExpr flat = b.getAffineConstantExpr(0);
    int64_t count = 1;
    for (unsigned i : folded) {
      flat = flat * domain[i] + b.getAffineDimExpr(i);
      count *= domain[i];
    }
    partialIndex.push_back(flat);
    if (generic.getCombinerKinds()[0] == CombinerKind::welford)
      return welfordInTwo(generic, kept, reduced, oldLoops, partialIndex, count, domain[col]);
    return reduceInTwo(generic, kept, domain, reduced, oldLoops, partialIndex, count,
                       /*countFirst=*/false);
  }

  /// The generic that reduces `generic`'s body over `firstDomain` (loops
  /// `reduced` reduced, `oldLoops` the old loops in its terms) into
  /// `partials`, each at `partialIndex`.
  static GenericOp partialsGeneric(GenericOp generic, ArrayRef<int64_t> firstDomain,
                                   ArrayRef<bool> reduced, ArrayRef<AffineExpr> oldLoops,
                                   ArrayRef<AffineExpr> partialIndex, ValueRange partials) {
    MLIRContext *ctx = generic.getContext();
    OpBuilder b(generic);
    unsigned f = firstDomain.size();
    SmallVector<AffineMap> maps;
    for (unsigned i = 0, e = generic.getInputs().size(); i < e; ++i)
      maps.push_back(generic.getInputMap(i).replaceDimsAndSymbols(oldLoops, {}, f, 0));
    maps.append(partials.size(), AffineMap::get(f, 0, partialIndex, ctx));
    SmallVector<Attribute> iterators;
    for (bool r : reduced)
      iterators.push_back(IteratorTypeAttr::get(
          ctx, r ? utils::IteratorType::reduction : utils::IteratorType::parallel));
    auto first = GenericOp::create(
        b, generic.getLoc(), ValueRange{}, b.getDenseI64ArrayAttr(firstDomain), ValueRange{},
        generic.getInputs(), partials, b.getAffineMapArrayAttr(maps),
        b.getArrayAttr(iterators),
        b.getArrayAttr({CombinerKindAttr::get(ctx, generic.getCombinerKinds()[0])}));
    IRMapping mapping;
    generic.getBody().cloneInto(&first.getBody(), mapping);
    // The body's loop positions (iotas, masks) are of the old loops too.
    first.getBody().walk([&](IndexExprOp index) {
      index.setMapAttr(
          AffineMapAttr::get(index.getMap().replaceDimsAndSymbols(oldLoops, {}, f, 0)));
    });
    return first;
  }

  /// `collapse` for a Welford reduction (returns the partials' generic):
  /// the first generic's partial states (mean, M2, count of each of `count`
  /// rows of `points` points, laid out [kept..., count]) merge as Chan et
  /// al. do for equal counts: the mean is the mean of the means, M2 the sum
  /// of the M2s plus `points` times the M2 of the means, the count `count`
  /// x `points`.
  static GenericOp welfordInTwo(GenericOp generic, ArrayRef<unsigned> kept,
                                ArrayRef<bool> reduced, ArrayRef<AffineExpr> oldLoops,
                                ArrayRef<AffineExpr> partialIndex, int64_t count,
                                int64_t points) {
    MLIRContext *ctx = generic.getContext();
    OpBuilder b(generic);
    Location loc = generic.getLoc();
    ArrayRef<int64_t> domain = generic.getStaticDomain();
    unsigned n = domain.size(), m = kept.size();
    Type f32 = Float32Type::get(ctx);
    auto parallel = IteratorTypeAttr::get(ctx, utils::IteratorType::parallel);
    auto reduction = IteratorTypeAttr::get(ctx, utils::IteratorType::reduction);
    auto combiner = [&](CombinerKind kind) {
      return b.getArrayAttr({CombinerKindAttr::get(ctx, kind)});
    };
    SmallVector<int64_t> keptSizes;
    for (unsigned i : kept)
      keptSizes.push_back(domain[i]);
    SmallVector<int64_t> rowShape(keptSizes), partialShape(keptSizes);
    partialShape.push_back(count);
    if (rowShape.empty())
      rowShape.push_back(1);
    auto alloc = [&](ArrayRef<int64_t> shape) {
      return AllocOp::create(b, loc, BufferType::get(shape, f32), ValueRange{}).getResult();
    };
    auto block = [&](GenericOp op, unsigned arguments) {
      OpBuilder::InsertionGuard stay(b);
      Block *body = b.createBlock(&op.getBody(), {}, SmallVector<Type>(arguments, f32),
                                  SmallVector<Location>(arguments, loc));
      return OpBuilder::atBlockEnd(body);
    };

    // Partial states, one per point of the folded loops.
    SmallVector<Value> partials = {alloc(partialShape), alloc(partialShape),
                                   alloc(partialShape)};
    GenericOp first = partialsGeneric(generic, domain, reduced, oldLoops, partialIndex, partials);

    // Over [kept..., count]: the partials' row of each output; the old
    // outputs' maps in terms of the kept loops (a [1] domain without any).
    SmallVector<int64_t> rowsDomain(keptSizes);
    rowsDomain.push_back(count);
    SmallVector<AffineExpr> keptDims;
    for (unsigned j = 0; j < m; ++j)
      keptDims.push_back(b.getAffineDimExpr(j));
    AffineMap readRow = AffineMap::get(m + 1, 0, [&] {
      SmallVector<AffineExpr> e(keptDims);
      e.push_back(b.getAffineDimExpr(m));
      return e;
    }(), ctx);
    unsigned rank = rowShape.size();
    SmallVector<AffineExpr> outLoops(n, b.getAffineConstantExpr(0));
    for (auto [j, i] : llvm::enumerate(kept))
      outLoops[i] = b.getAffineDimExpr(unsigned(j));
    auto outputMap = [&](unsigned k, unsigned dims) {
      return generic.getOutputMap(k).replaceDimsAndSymbols(outLoops, {}, dims, 0);
    };
    AffineMap ownRow = m ? AffineMap::get(m + 1, 0, keptDims, ctx)
                         : AffineMap::get(1, 0, {b.getAffineConstantExpr(0)}, ctx);
    SmallVector<Attribute> rowIterators(m, parallel);
    rowIterators.push_back(reduction);
    Value out = generic.getOutputs()[0], outM2 = generic.getOutputs()[1],
          outCount = generic.getOutputs()[2];

    // The means' Welford: the mean itself, the means' M2, their count.
    Value meansM2 = alloc(rowShape), meansCount = alloc(rowShape);
    auto means = GenericOp::create(
        b, loc, ValueRange{}, b.getDenseI64ArrayAttr(rowsDomain), ValueRange{},
        ValueRange{partials[0]}, ValueRange{out, meansM2, meansCount},
        b.getAffineMapArrayAttr({readRow, outputMap(0, m + 1), ownRow, ownRow}),
        b.getArrayAttr(rowIterators), combiner(CombinerKind::welford));
    {
      OpBuilder in = block(means, 1);
      YieldOp::create(in, loc, means.getBody().front().getArgument(0));
    }
    // The M2s' sum.
    Value sumM2 = alloc(rowShape);
    auto sum = GenericOp::create(b, loc, ValueRange{}, b.getDenseI64ArrayAttr(rowsDomain),
                                 ValueRange{}, ValueRange{partials[1]}, ValueRange{sumM2},
                                 b.getAffineMapArrayAttr({readRow, ownRow}),
                                 b.getArrayAttr(rowIterators), combiner(CombinerKind::sum));
    {
      OpBuilder in = block(sum, 1);
      YieldOp::create(in, loc, sum.getBody().front().getArgument(0));
    }
    // M2 = sum of M2s + points x M2 of the means; count = count x points.
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    SmallVector<Attribute> elementwise(rank, parallel);
    auto merged = GenericOp::create(
        b, loc, ValueRange{}, b.getDenseI64ArrayAttr(rowShape), ValueRange{},
        ValueRange{sumM2, meansM2, meansCount}, ValueRange{outM2, outCount},
        b.getAffineMapArrayAttr({identity, identity, identity, outputMap(1, rank),
                                 outputMap(2, rank)}),
        b.getArrayAttr(elementwise), ArrayAttr());
    {
      OpBuilder in = block(merged, 3);
      Block &body = merged.getBody().front();
      Value scale = arith::ConstantOp::create(in, loc, b.getF32FloatAttr(float(points)));
      Value spread = arith::MulFOp::create(in, loc, body.getArgument(1), scale);
      Value m2 = arith::AddFOp::create(in, loc, body.getArgument(0), spread);
      Value total = arith::MulFOp::create(in, loc, body.getArgument(2), scale);
      YieldOp::create(in, loc, ValueRange{m2, total});
    }
    generic.erase();
    return first;
  }

  /// Replaces `generic` by a first generic over `firstDomain` (loops
  /// `reduced` reduced, `oldLoops` the old loops in its terms) that writes
  /// partials at `partialIndex`, a second that combines the `count`
  /// partials of each output (kept loops `kept` of the old ones; partials
  /// laid out [count, kept...] or [kept..., count]), and for a 16-bit float
  /// sum or product a third that rounds the f32 total once, as the uncut
  /// reduction did on its store. Returns the first.
  static GenericOp reduceInTwo(GenericOp generic, ArrayRef<unsigned> kept,
                               ArrayRef<int64_t> firstDomain, ArrayRef<bool> reduced,
                               ArrayRef<AffineExpr> oldLoops, ArrayRef<AffineExpr> partialIndex,
                               int64_t count, bool countFirst) {
    MLIRContext *ctx = generic.getContext();
    OpBuilder b(generic);
    Location loc = generic.getLoc();
    ArrayRef<int64_t> domain = generic.getStaticDomain();
    unsigned n = domain.size();
    SmallVector<int64_t> keptSizes;
    for (unsigned i : kept)
      keptSizes.push_back(domain[i]);
    CombinerKind kind = generic.getCombinerKinds()[0];
    Value out = generic.getOutputs()[0];
    auto yield = cast<YieldOp>(generic.getBody().front().getTerminator());
    Type yielded = yield.getValues()[0].getType();
    // A 16-bit float sum or product accumulates in f32: so do its partials.
    bool widen = isNarrowFloat(yielded) && (kind == CombinerKind::sum ||
                                            kind == CombinerKind::prod);
    Type partialType = widen ? Float32Type::get(ctx) : yielded;
    auto parallel = IteratorTypeAttr::get(ctx, utils::IteratorType::parallel);
    auto reduction = IteratorTypeAttr::get(ctx, utils::IteratorType::reduction);
    ArrayAttr combiners = b.getArrayAttr({CombinerKindAttr::get(ctx, kind)});

    SmallVector<int64_t> partialShape(keptSizes);
    partialShape.insert(countFirst ? partialShape.begin() : partialShape.end(), count);
    Value partials = AllocOp::create(b, loc, BufferType::get(partialShape, partialType),
                                     ValueRange{});
    GenericOp first = partialsGeneric(generic, firstDomain, reduced, oldLoops, partialIndex,
                                      ValueRange{partials});
    if (widen) {
      auto cloned = cast<YieldOp>(first.getBody().front().getTerminator());
      OpBuilder inBody(cloned);
      Value wide = arith::ExtFOp::create(inBody, loc, partialType, cloned.getValues()[0]);
      cloned->setOperands(ValueRange{wide});
    }

    // The combine: the parallel loops, then the partials (reduced).
    unsigned m = kept.size();
    SmallVector<int64_t> secondDomain(keptSizes);
    secondDomain.push_back(count);
    SmallVector<AffineExpr> readPartial;
    for (unsigned j = 0; j < m; ++j)
      readPartial.push_back(b.getAffineDimExpr(j));
    readPartial.insert(countFirst ? readPartial.begin() : readPartial.end(),
                       b.getAffineDimExpr(m));
    // The old loops in terms of the combine's (and the rounding's): parallel
    // loop j of either is old loop kept[j]; the reduced ones are gone.
    SmallVector<AffineExpr> outLoops(n, b.getAffineConstantExpr(0));
    for (auto [j, i] : llvm::enumerate(kept))
      outLoops[i] = b.getAffineDimExpr(unsigned(j));
    AffineMap outMap = generic.getOutputMap(0).replaceDimsAndSymbols(outLoops, {}, m + 1, 0);
    // A widened total goes to a temporary over the parallel loops ([1]
    // without any), so that the rounding writes only what the reduction
    // wrote of the output (one slice of a concatenation, say).
    SmallVector<int64_t> combinedShape(keptSizes);
    if (combinedShape.empty())
      combinedShape.push_back(1);
    Value combined = out;
    if (widen) {
      combined = AllocOp::create(b, loc, BufferType::get(combinedShape, partialType),
                                 ValueRange{});
      SmallVector<AffineExpr> own;
      for (unsigned j = 0; j < m; ++j)
        own.push_back(b.getAffineDimExpr(j));
      if (own.empty())
        own.push_back(b.getAffineConstantExpr(0));
      outMap = AffineMap::get(m + 1, 0, own, ctx);
    }
    SmallVector<Attribute> secondIterators(m, parallel);
    secondIterators.push_back(reduction);
    auto second = GenericOp::create(
        b, loc, ValueRange{}, b.getDenseI64ArrayAttr(secondDomain), ValueRange{},
        ValueRange{partials}, ValueRange{combined},
        b.getAffineMapArrayAttr({AffineMap::get(m + 1, 0, readPartial, ctx), outMap}),
        b.getArrayAttr(secondIterators), combiners);
    {
      Block *body = b.createBlock(&second.getBody(), {}, {partialType}, {loc});
      OpBuilder inBody = OpBuilder::atBlockEnd(body);
      YieldOp::create(inBody, loc, body->getArgument(0));
    }

    // Rounded once to the output's type, as the uncut reduction stored it.
    if (widen) {
      b.setInsertionPointAfter(second);
      unsigned rank = combinedShape.size();
      AffineMap write = generic.getOutputMap(0).replaceDimsAndSymbols(outLoops, {}, rank, 0);
      auto round = GenericOp::create(
          b, loc, ValueRange{}, b.getDenseI64ArrayAttr(combinedShape), ValueRange{},
          ValueRange{combined}, ValueRange{out},
          b.getAffineMapArrayAttr({b.getMultiDimIdentityMap(rank), write}),
          b.getArrayAttr(SmallVector<Attribute>(rank, parallel)), ArrayAttr());
      Block *body = b.createBlock(&round.getBody(), {}, {partialType}, {loc});
      OpBuilder inBody = OpBuilder::atBlockEnd(body);
      Value narrow = arith::TruncFOp::create(inBody, loc, yielded, body->getArgument(0));
      YieldOp::create(inBody, loc, narrow);
    }
    generic.erase();
    return first;
  }
};

} // namespace
