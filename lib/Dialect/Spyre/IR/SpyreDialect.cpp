//===- SpyreDialect.cpp - Spyre dialect registration ----------------------===//

#include "spyre-mlir/Dialect/Spyre/IR/SpyreDialect.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::spyre;

#include "spyre-mlir/Dialect/Spyre/IR/SpyreDialect.cpp.inc"

/// Folded `spyre.dim` sizes become `arith.constant`s.
Operation *SpyreDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                             Type type, Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value);
      typed && arith::ConstantOp::isBuildableWith(typed, type))
    return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

namespace {

/// `cmpi eq|ne (select %c, K1, K2), K` with integer constants is `%c`, its
/// negation or a constant. Inductor's index_put writes its one-hot mask as
/// `select(hit, 0, -1) == 0`: folded, every element of a cache update costs
/// the card's SFUs two instructions fewer.
struct CompareSelectOfConstants : OpRewritePattern<arith::CmpIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::CmpIOp op, PatternRewriter &rewriter) const override {
    bool eq = op.getPredicate() == arith::CmpIPredicate::eq;
    // Scalars (generic bodies): the replacement constants are i1.
    if ((!eq && op.getPredicate() != arith::CmpIPredicate::ne) || !op.getType().isInteger(1))
      return failure();
    for (unsigned side : {0u, 1u}) {
      auto select = op->getOperand(side).getDefiningOp<arith::SelectOp>();
      APInt k, ifTrue, ifFalse;
      if (!select || !matchPattern(op->getOperand(1 - side), m_ConstantInt(&k)) ||
          !matchPattern(select.getTrueValue(), m_ConstantInt(&ifTrue)) ||
          !matchPattern(select.getFalseValue(), m_ConstantInt(&ifFalse)))
        continue;
      bool whenTrue = (ifTrue == k) == eq, whenFalse = (ifFalse == k) == eq;
      Value c = select.getCondition();
      if (whenTrue == whenFalse)
        rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, rewriter.getBoolAttr(whenTrue));
      else if (whenTrue)
        rewriter.replaceOp(op, c);
      else
        rewriter.replaceOpWithNewOp<arith::XOrIOp>(
            op, c, arith::ConstantOp::create(rewriter, op.getLoc(), rewriter.getBoolAttr(true)));
      return success();
    }
    return failure();
  }
};

/// `truncf (select %c, (extf %a), (extf %b))` back to the type of `%a` and
/// `%b` is `select %c, %a, %b`: widening is exact, so narrowing the chosen
/// value gives it back. A cache update selects between the new row and the
/// old cache element this way, each widened to f32 for nothing.
struct NarrowedSelectOfWidened : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &rewriter) const override {
    auto select = op.getIn().getDefiningOp<arith::SelectOp>();
    if (!select)
      return failure();
    auto a = select.getTrueValue().getDefiningOp<arith::ExtFOp>();
    auto b = select.getFalseValue().getDefiningOp<arith::ExtFOp>();
    if (!a || !b || a.getIn().getType() != op.getType() || b.getIn().getType() != op.getType())
      return failure();
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, select.getCondition(), a.getIn(),
                                                 b.getIn());
    return success();
  }
};

} // namespace

/// Patterns on the `arith` ops of generic bodies that upstream's
/// canonicalization does not have; each is exact.
void SpyreDialect::getCanonicalizationPatterns(RewritePatternSet &results) const {
  results.add<CompareSelectOfConstants, NarrowedSelectOfWidened>(getContext());
}

void SpyreDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.cpp.inc"
      >();
}
