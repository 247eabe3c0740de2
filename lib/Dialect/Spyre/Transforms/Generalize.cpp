//===- Generalize.cpp - data-movement ops to spyre.generic ----------------===//
//
// Later passes (fusion, tiling) then reason about one elementwise op with
// affine maps instead of seven special cases.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYREGENERALIZE
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {

/// The domain of a generic that visits every element of `buffer`.
struct Domain {
  SmallVector<Value> dynamicSizes;
  SmallVector<int64_t> staticSizes;
};

Domain domainOf(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<BufferType>(buffer.getType());
  Domain domain;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    domain.staticSizes.push_back(type.getDimSize(i));
    if (type.isDynamicDim(i))
      domain.dynamicSizes.push_back(DimOp::create(b, loc, buffer, i));
  }
  return domain;
}

/// Builds a generic over `domain` whose body yields its single input, or
/// `fillValue` when there is no input.
void buildCopyLikeGeneric(PatternRewriter &rewriter, Location loc,
                          const Domain &domain, ValueRange symbols,
                          ValueRange inputs, Value output,
                          ArrayRef<AffineMap> maps,
                          TypedAttr fillValue = {}) {
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<Attribute> iterators(
      domain.staticSizes.size(),
      IteratorTypeAttr::get(ctx, utils::IteratorType::parallel));
  auto generic = GenericOp::create(
      rewriter, loc, domain.dynamicSizes,
      rewriter.getDenseI64ArrayAttr(domain.staticSizes), symbols, inputs,
      ValueRange{output}, rewriter.getAffineMapArrayAttr(maps),
      rewriter.getArrayAttr(iterators), /*combiners=*/ArrayAttr());
  SmallVector<Type> argTypes;
  for (Value input : inputs)
    argTypes.push_back(cast<BufferType>(input.getType()).getElementType());
  SmallVector<Location> argLocs(argTypes.size(), loc);
  Block *body = rewriter.createBlock(&generic.getBody(), {}, argTypes, argLocs);
  rewriter.setInsertionPointToStart(body);
  Value yielded = fillValue
                      ? arith::ConstantOp::create(rewriter, loc, fillValue)
                            .getResult()
                      : body->getArgument(0);
  YieldOp::create(rewriter, loc, yielded);
  rewriter.setInsertionPointAfter(generic);
}

/// The map from the loops (one per target dimension) to the source element
/// each copy-like op reads; the target is written at the loops' point.
AffineMap sourceMap(CopyOp, unsigned rank, Builder &b) {
  return b.getMultiDimIdentityMap(rank);
}

AffineMap sourceMap(PermuteOp op, unsigned rank, Builder &b) {
  // Target dim i is source dim perm[i], so source dim perm[i] reads loop i.
  SmallVector<AffineExpr> sourceIndex(rank);
  for (auto [i, p] : llvm::enumerate(op.getPermutation()))
    sourceIndex[p] = b.getAffineDimExpr(i);
  return AffineMap::get(rank, 0, sourceIndex, b.getContext());
}

AffineMap sourceMap(BroadcastOp op, unsigned rank, Builder &b) {
  SmallVector<AffineExpr> sourceIndex;
  for (unsigned i = 0; i < rank; ++i)
    if (!llvm::is_contained(op.getDimensions(), i))
      sourceIndex.push_back(b.getAffineDimExpr(i));
  return AffineMap::get(rank, 0, sourceIndex, b.getContext());
}

/// Copy, permute and broadcast: a generic over the target that reads the
/// source through sourceMap().
template <typename OpT>
struct GeneralizeCopyLike : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    Domain domain = domainOf(rewriter, op.getLoc(), op.getTarget());
    unsigned rank = domain.staticSizes.size();
    buildCopyLikeGeneric(rewriter, op.getLoc(), domain, {}, op.getSource(), op.getTarget(),
                         {sourceMap(op, rank, rewriter), rewriter.getMultiDimIdentityMap(rank)});
    rewriter.eraseOp(op);
    return success();
  }
};

struct GeneralizeSlice : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op, PatternRewriter &rewriter) const override {
    Domain domain = domainOf(rewriter, op.getLoc(), op.getTarget());
    unsigned rank = domain.staticSizes.size();
    // Dynamic offsets become symbols of the map, in operand order.
    SmallVector<AffineExpr> sourceIndex;
    unsigned symbol = 0;
    for (unsigned i = 0; i < rank; ++i) {
      int64_t offset = op.getStaticOffsets()[i];
      AffineExpr start = ShapedType::isDynamic(offset)
                             ? rewriter.getAffineSymbolExpr(symbol++)
                             : rewriter.getAffineConstantExpr(offset);
      sourceIndex.push_back(start +
                            rewriter.getAffineDimExpr(i) * op.getStrides()[i]);
    }
    AffineMap in = AffineMap::get(rank, symbol, sourceIndex, getContext());
    AffineMap out = AffineMap::getMultiDimIdentityMap(rank, getContext());
    out = AffineMap::get(rank, symbol, out.getResults(), getContext());
    buildCopyLikeGeneric(rewriter, op.getLoc(), domain, op.getOffsets(),
                         op.getSource(), op.getTarget(), {in, out});
    rewriter.eraseOp(op);
    return success();
  }
};

struct GeneralizeConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t dim = op.getDim();
    // One generic per input; each writes at the running offset along `dim`,
    // a constant while all sizes are static, a symbol from then on.
    int64_t staticOffset = 0;
    Value dynamicOffset;
    for (Value input : op.getInputs()) {
      Domain domain = domainOf(rewriter, loc, input);
      unsigned rank = domain.staticSizes.size();
      SmallVector<Value> symbols;
      SmallVector<AffineExpr> targetIndex;
      for (unsigned i = 0; i < rank; ++i)
        targetIndex.push_back(rewriter.getAffineDimExpr(i));
      targetIndex[dim] = targetIndex[dim] + staticOffset;
      if (dynamicOffset) {
        symbols.push_back(dynamicOffset);
        targetIndex[dim] = targetIndex[dim] + rewriter.getAffineSymbolExpr(0);
      }
      unsigned numSymbols = symbols.size();
      AffineMap in = AffineMap::get(
          rank, numSymbols,
          AffineMap::getMultiDimIdentityMap(rank, getContext()).getResults(),
          getContext());
      AffineMap out = AffineMap::get(rank, numSymbols, targetIndex, getContext());
      buildCopyLikeGeneric(rewriter, loc, domain, symbols, input,
                           op.getTarget(), {in, out});
      auto type = cast<BufferType>(input.getType());
      if (!type.isDynamicDim(dim)) {
        staticOffset += type.getDimSize(dim);
        continue;
      }
      Value size = DimOp::create(rewriter, loc, input, dim);
      dynamicOffset = dynamicOffset
                          ? arith::AddIOp::create(rewriter, loc, dynamicOffset, size)
                                .getResult()
                          : size;
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct GeneralizeFill : OpRewritePattern<FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FillOp op, PatternRewriter &rewriter) const override {
    Domain domain = domainOf(rewriter, op.getLoc(), op.getTarget());
    AffineMap id = rewriter.getMultiDimIdentityMap(domain.staticSizes.size());
    buildCopyLikeGeneric(rewriter, op.getLoc(), domain, {}, {}, op.getTarget(),
                         {id}, cast<TypedAttr>(op.getValue()));
    rewriter.eraseOp(op);
    return success();
  }
};

struct SpyreGeneralizePass
    : mlir::spyre::impl::SpyreGeneralizeBase<SpyreGeneralizePass> {
  using SpyreGeneralizeBase::SpyreGeneralizeBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateGeneralizePatterns(patterns, copies);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!reportKept)
      return;
    getOperation().walk([&](Operation *op) {
      if (isa<GatherOp, ScatterOp>(op))
        op->emitRemark("kept: the index is loaded at run time, which an "
                       "affine map cannot express");
      else if (isa<CopyOp>(op))
        op->emitRemark("kept: copies are not generalized (copies=false)");
    });
  }
};

} // namespace

void mlir::spyre::populateGeneralizePatterns(RewritePatternSet &patterns,
                                             bool copies) {
  patterns.add<GeneralizeCopyLike<PermuteOp>, GeneralizeCopyLike<BroadcastOp>, GeneralizeSlice,
               GeneralizeConcat, GeneralizeFill>(patterns.getContext());
  if (copies)
    patterns.add<GeneralizeCopyLike<CopyOp>>(patterns.getContext());
}
