//===- SpyreGenericOp.cpp - spyre.generic and its body ops ----------------===//
//
// spyre.generic carries Inductor's loop bodies, so its verifier is where
// export bugs surface: it checks map arities, reduction structure, combiner
// types and, where everything is static, that no map indexes out of bounds.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/BitVector.h"
#include "llvm/Support/MathExtras.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::spyre;

unsigned GenericOp::getNumOutputsOf(CombinerKind kind) {
  return kind == CombinerKind::welford ? 3 : 1;
}

SmallVector<CombinerKind> GenericOp::getCombinerKinds() {
  if (std::optional<ArrayAttr> combiners = getCombiners())
    return llvm::map_to_vector(*combiners, [](Attribute a) {
      return cast<CombinerKindAttr>(a).getValue();
    });
  return SmallVector<CombinerKind>(getOutputs().size(), CombinerKind::none);
}

SmallVector<unsigned> GenericOp::getReductionLoops() {
  SmallVector<unsigned> loops;
  for (auto [i, attr] : llvm::enumerate(getIteratorTypes()))
    if (cast<IteratorTypeAttr>(attr).getValue() == utils::IteratorType::reduction)
      loops.push_back(i);
  return loops;
}

void GenericOp::permuteLoops(ArrayRef<unsigned> order) {
  ArrayRef<int64_t> sizes = getStaticDomain();
  unsigned n = unsigned(sizes.size());
  assert(order.size() == n && getDomainSizes().empty() && "a static domain's loops");
  MLIRContext *context = getContext();
  SmallVector<AffineExpr> oldToNew(n);
  SmallVector<int64_t> newSizes;
  SmallVector<Attribute> iterators;
  for (auto [j, d] : llvm::enumerate(order)) {
    oldToNew[d] = getAffineDimExpr(unsigned(j), context);
    newSizes.push_back(sizes[d]);
    iterators.push_back(getIteratorTypes()[d]);
  }
  auto permuted = [&](AffineMap map) {
    SmallVector<AffineExpr> symbols;
    for (unsigned i = 0; i < map.getNumSymbols(); ++i)
      symbols.push_back(getAffineSymbolExpr(i, context));
    return map.replaceDimsAndSymbols(oldToNew, symbols, n, map.getNumSymbols());
  };
  SmallVector<Attribute> maps;
  for (Attribute attr : getIndexingMaps())
    maps.push_back(AffineMapAttr::get(permuted(cast<AffineMapAttr>(attr).getValue())));
  for (IndexExprOp expr : getBody().front().getOps<IndexExprOp>())
    expr.setMapAttr(AffineMapAttr::get(permuted(expr.getMap())));
  setStaticDomainAttr(DenseI64ArrayAttr::get(context, newSizes));
  setIndexingMapsAttr(ArrayAttr::get(context, maps));
  setIteratorTypesAttr(ArrayAttr::get(context, iterators));
}

namespace {
/// Inclusive range of an affine expression over a static box domain. Returns
/// nothing where the range is not known statically (symbols, dynamic loops).
struct IndexRange {
  int64_t lo, hi;
};

std::optional<IndexRange> rangeOf(AffineExpr expr, ArrayRef<int64_t> domain) {
  switch (expr.getKind()) {
  case AffineExprKind::Constant: {
    int64_t c = cast<AffineConstantExpr>(expr).getValue();
    return IndexRange{c, c};
  }
  case AffineExprKind::DimId: {
    int64_t size = domain[cast<AffineDimExpr>(expr).getPosition()];
    if (ShapedType::isDynamic(size) || size <= 0)
      return std::nullopt;
    return IndexRange{0, size - 1};
  }
  case AffineExprKind::SymbolId:
    return std::nullopt;
  default:
    break;
  }
  auto bin = cast<AffineBinaryOpExpr>(expr);
  std::optional<IndexRange> l = rangeOf(bin.getLHS(), domain);
  std::optional<IndexRange> r = rangeOf(bin.getRHS(), domain);
  if (!l || !r)
    return std::nullopt;
  switch (expr.getKind()) {
  case AffineExprKind::Add: {
    IndexRange sum;
    if (llvm::AddOverflow(l->lo, r->lo, sum.lo) || llvm::AddOverflow(l->hi, r->hi, sum.hi))
      return std::nullopt;
    return sum;
  }
  case AffineExprKind::Mul: {
    int64_t a, b, c, d;
    if (llvm::MulOverflow(l->lo, r->lo, a) || llvm::MulOverflow(l->lo, r->hi, b) ||
        llvm::MulOverflow(l->hi, r->lo, c) || llvm::MulOverflow(l->hi, r->hi, d))
      return std::nullopt;
    return IndexRange{std::min({a, b, c, d}), std::max({a, b, c, d})};
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    if (r->lo != r->hi || r->lo <= 0)
      return std::nullopt;
    int64_t d = r->lo;
    if (expr.getKind() == AffineExprKind::FloorDiv)
      return IndexRange{llvm::divideFloorSigned(l->lo, d),
                        llvm::divideFloorSigned(l->hi, d)};
    return IndexRange{llvm::divideCeilSigned(l->lo, d),
                      llvm::divideCeilSigned(l->hi, d)};
  }
  case AffineExprKind::Mod: {
    if (r->lo != r->hi || r->lo <= 0)
      return std::nullopt;
    if (l->lo >= 0 && l->hi < r->lo)
      return l;
    return IndexRange{0, r->lo - 1};
  }
  default:
    return std::nullopt;
  }
}
} // namespace

/// Checks one operand's map against the domain and, where all is static, its
/// bounds.
static LogicalResult verifyMap(GenericOp op, AffineMap map, Value operand,
                               StringRef role, unsigned index) {
  auto type = cast<BufferType>(operand.getType());
  auto fail = [&]() {
    return op.emitOpError() << "indexing map of " << role << " #" << index;
  };
  if (map.getNumDims() != op.getNumLoops())
    return fail() << " has " << map.getNumDims() << " dimensions but the "
                  << "domain has " << op.getNumLoops() << " loops";
  if (map.getNumSymbols() != op.getSymbols().size())
    return fail() << " has " << map.getNumSymbols() << " symbols but "
                  << op.getSymbols().size() << " are bound";
  if (map.getNumResults() != type.getRank())
    return fail() << " has " << map.getNumResults()
                  << " results but the buffer has rank " << type.getRank();
  ArrayRef<int64_t> domain = op.getStaticDomain();
  if (llvm::is_contained(domain, 0))
    return success(); // Nothing is accessed.
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    std::optional<IndexRange> range = rangeOf(expr, domain);
    int64_t size = type.getDimSize(dim);
    if (!range || ShapedType::isDynamic(size))
      continue;
    if (range->lo < 0 || range->hi >= size)
      return fail() << " indexes dim " << dim << " over [" << range->lo
                    << ", " << range->hi << "] but its size is " << size;
  }
  return success();
}

LogicalResult GenericOp::verify() {
  int64_t numLoops = getNumLoops();
  if (failed(verifyListOfOperandsOrIntegers(*this, "domain", numLoops,
                                            getStaticDomain(),
                                            getDomainSizes())))
    return failure();
  int64_t points = 1;
  for (int64_t size : getStaticDomain()) {
    if (!ShapedType::isDynamic(size) && size < 0)
      return emitOpError() << "domain sizes must be >= 0, got " << size;
    // Loop counts are int64 everywhere; a domain beyond it would wrap.
    if (!ShapedType::isDynamic(size) && llvm::MulOverflow(points, size, points))
      return emitOpError() << "domain has more than 2^63 points";
  }
  if (static_cast<int64_t>(getIteratorTypes().size()) != numLoops)
    return emitOpError() << "has " << getIteratorTypes().size()
                         << " iterator types for " << numLoops << " loops";
  size_t numOperands = getInputs().size() + getOutputs().size();
  if (getIndexingMaps().size() != numOperands)
    return emitOpError() << "has " << getIndexingMaps().size()
                         << " indexing maps for " << numOperands
                         << " operands";
  if (getOutputs().empty())
    return emitOpError("needs at least one output");
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (failed(verifyMap(*this, getInputMap(i), input, "input", i)))
      return failure();
  for (auto [i, output] : llvm::enumerate(getOutputs()))
    if (failed(verifyMap(*this, getOutputMap(i), output, "output", i)))
      return failure();

  SmallVector<CombinerKind> kinds = getCombinerKinds();
  size_t expectedOutputs = 0;
  for (CombinerKind kind : kinds)
    expectedOutputs += getNumOutputsOf(kind);
  if (expectedOutputs != getOutputs().size())
    return emitOpError() << "combiners write " << expectedOutputs
                         << " outputs but " << getOutputs().size()
                         << " are given";

  SmallVector<unsigned> reductionLoops = getReductionLoops();
  unsigned output = 0;
  for (auto [i, kind] : llvm::enumerate(kinds)) {
    if (kind == CombinerKind::none) {
      if (!reductionLoops.empty())
        return emitOpError() << "combiner #" << i << " is 'none' but loop "
                             << reductionLoops.front()
                             << " is a reduction: every yielded value must "
                                "be reduced";
      ++output;
      continue;
    }
    for (unsigned k = 0; k < getNumOutputsOf(kind); ++k, ++output) {
      AffineMap map = getOutputMap(output);
      for (unsigned loop : reductionLoops)
        if (map.isFunctionOfDim(loop))
          return emitOpError() << "output #" << output << " is reduced ("
                               << stringifyCombinerKind(kind)
                               << ") but its map uses reduction loop d"
                               << loop;
      Type elementType =
          cast<BufferType>(getOutputs()[output].getType()).getElementType();
      bool ok = true;
      switch (kind) {
      case CombinerKind::argmax:
      case CombinerKind::argmin:
        ok = elementType.isSignlessInteger(32);
        break;
      case CombinerKind::any:
      case CombinerKind::all:
        ok = elementType.isSignlessInteger(1);
        break;
      case CombinerKind::welford:
        ok = isa<FloatType>(elementType);
        break;
      default:
        break;
      }
      if (!ok)
        return emitOpError() << "output #" << output << " of a '"
                             << stringifyCombinerKind(kind)
                             << "' reduction cannot have element type "
                             << elementType;
    }
  }
  return success();
}

LogicalResult GenericOp::verifyRegions() {
  if (getBody().empty())
    return emitOpError("needs a body block");
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments for " << getInputs().size()
                         << " inputs";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip_equal(body.getArgumentTypes(), getInputs()))) {
    Type expected =
        cast<BufferType>(std::get<1>(pair).getType()).getElementType();
    if (std::get<0>(pair) != expected)
      return emitOpError() << "body argument #" << i << " has type "
                           << std::get<0>(pair) << " but input #" << i
                           << " holds " << expected;
  }
  if (body.empty())
    return emitOpError("body must end with 'spyre.yield'");
  for (Operation &op : body.without_terminator())
    if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) &&
        !isa<IndexExprOp>(op))
      return op.emitOpError() << "is not allowed in a spyre.generic body "
                                 "(only arith, math and spyre.index_expr)";
  auto yield = dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end with 'spyre.yield'");

  SmallVector<CombinerKind> kinds = getCombinerKinds();
  if (yield.getValues().size() != kinds.size())
    return yield.emitOpError() << "yields " << yield.getValues().size()
                               << " values but the generic has "
                               << kinds.size() << " combiners";
  unsigned output = 0;
  for (auto [i, kind] : llvm::enumerate(kinds)) {
    Type yielded = yield.getValues()[i].getType();
    Type stored =
        cast<BufferType>(getOutputs()[output].getType()).getElementType();
    output += getNumOutputsOf(kind);
    switch (kind) {
    case CombinerKind::argmax:
    case CombinerKind::argmin:
      if (!yielded.isIntOrFloat())
        return yield.emitOpError() << "value #" << i << " of an "
                                   << stringifyCombinerKind(kind)
                                   << " must be a number, got " << yielded;
      continue;
    case CombinerKind::any:
    case CombinerKind::all:
      if (!yielded.isSignlessInteger(1))
        return yield.emitOpError() << "value #" << i << " of an '"
                                   << stringifyCombinerKind(kind)
                                   << "' reduction must be i1, got "
                                   << yielded;
      continue;
    default:
      if (yielded != stored)
        return yield.emitOpError() << "value #" << i << " has type "
                                   << yielded << " but its output holds "
                                   << stored;
    }
  }
  return success();
}

/// Domain sizes that are constants become static, which later passes (tiling,
/// bounds checks) can use.
static LogicalResult foldStaticDomain(GenericOp op, PatternRewriter &rewriter) {
  SmallVector<OpFoldResult> sizes = getMixedValues(
      op.getStaticDomain(), op.getDomainSizes(), rewriter.getContext());
  if (failed(foldDynamicIndexList(sizes, /*onlyNonNegative=*/true)))
    return failure();
  SmallVector<Value> dynamic;
  SmallVector<int64_t> staticSizes;
  dispatchIndexOpFoldResults(sizes, dynamic, staticSizes);
  rewriter.modifyOpInPlace(op, [&] {
    op.setStaticDomain(staticSizes);
    op->setOperands(0, op.getDomainSizes().size(), dynamic);
    op.getProperties().operandSegmentSizes[0] = dynamic.size();
  });
  return success();
}

/// Inputs read at the same index of the same buffer become one, and inputs
/// the body does not read go. Inductor loads an element once per use (a
/// 3x3 max-pool window with its NaN checks reads each tap several times; a
/// reflected grid sample recomputes one coordinate from dozens of loads),
/// and every input is a tile the card loads into LX: merged, CSE can merge
/// what the body computes from them, and each tile is loaded once.
static LogicalResult mergeInputs(GenericOp op, PatternRewriter &rewriter) {
  Block &body = op.getBody().front();
  unsigned numInputs = op.getInputs().size();
  SmallVector<int> sameAs(numInputs, -1); // an earlier identical input
  bool changed = false;
  for (unsigned i = 0; i < numInputs; ++i) {
    for (unsigned j = 0; j < i && sameAs[i] < 0; ++j)
      if (sameAs[j] < 0 && op.getInputs()[j] == op.getInputs()[i] &&
          op.getInputMap(j) == op.getInputMap(i))
        sameAs[i] = int(j);
    changed |= sameAs[i] >= 0 || body.getArgument(i).use_empty();
  }
  if (!changed)
    return failure();
  for (unsigned i = 0; i < numInputs; ++i)
    if (sameAs[i] >= 0)
      rewriter.replaceAllUsesWith(body.getArgument(i), body.getArgument(sameAs[i]));
  rewriter.modifyOpInPlace(op, [&] {
    SmallVector<Value> inputs;
    SmallVector<Attribute> maps;
    llvm::BitVector erased(numInputs);
    for (unsigned i = 0; i < numInputs; ++i) {
      if (body.getArgument(i).use_empty()) {
        erased.set(i);
        continue;
      }
      inputs.push_back(op.getInputs()[i]);
      maps.push_back(op.getIndexingMaps()[i]);
    }
    llvm::append_range(maps, op.getIndexingMaps().getValue().drop_front(numInputs));
    body.eraseArguments(erased);
    op.getInputsMutable().assign(inputs);
    op.setIndexingMapsAttr(rewriter.getArrayAttr(maps));
  });
  return success();
}

LogicalResult GenericOp::canonicalize(GenericOp op, PatternRewriter &rewriter) {
  bool folded = succeeded(foldStaticDomain(op, rewriter));
  return success(succeeded(mergeInputs(op, rewriter)) || folded);
}

LogicalResult IndexExprOp::verify() {
  auto generic = cast<GenericOp>((*this)->getParentOp());
  AffineMap map = getMap();
  if (map.getNumResults() != 1)
    return emitOpError() << "map must have one result, got "
                         << map.getNumResults();
  if (map.getNumDims() != generic.getNumLoops() ||
      map.getNumSymbols() != generic.getSymbols().size())
    return emitOpError() << "map takes (" << map.getNumDims() << " dims, "
                         << map.getNumSymbols()
                         << " symbols) but the generic has "
                         << generic.getNumLoops() << " loops and "
                         << generic.getSymbols().size() << " symbols";
  return success();
}
