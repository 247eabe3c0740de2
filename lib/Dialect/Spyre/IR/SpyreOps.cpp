//===- SpyreOps.cpp - Spyre ops other than spyre.generic ------------------===//

#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::spyre;

static BufferType bufferType(Value value) {
  return cast<BufferType>(value.getType());
}

static std::string dimString(int64_t dim) {
  return ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
}

/// Both dimensions agree unless both are static and differ.
static bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static LogicalResult verifySameElementType(Operation *op, Value a, Value b,
                                           StringRef what) {
  Type ea = bufferType(a).getElementType(), eb = bufferType(b).getElementType();
  if (ea != eb)
    return op->emitOpError() << what << " element types differ: " << ea
                             << " vs " << eb;
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                     FunctionType type) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addRegion();
}

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType = [](Builder &builder, ArrayRef<Type> argTypes,
                          ArrayRef<Type> results,
                          function_interface_impl::VariadicFlag,
                          std::string &) {
    return builder.getFunctionType(argTypes, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void KernelOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult FusedOp::verify() {
  int64_t generics = 0, matmuls = 0;
  SmallVector<MatmulOp, 2> matmulOps;
  SmallVector<GenericOp, 2> genericOps;
  for (Operation &op : getBody().front()) {
    if (auto generic = dyn_cast<GenericOp>(op)) {
      ++generics;
      genericOps.push_back(generic);
    } else if (auto matmul = dyn_cast<MatmulOp>(op)) {
      if (matmuls++ == 2)
        return emitOpError() << "may hold at most two spyre.matmul ops";
      matmulOps.push_back(matmul);
    } else if (!isa<AllocOp, DeallocOp>(op)) {
      return emitOpError() << "may hold only spyre.generic, spyre.matmul, spyre.alloc and "
                              "spyre.dealloc, not '"
                           << op.getName() << "'";
    }
  }
  // A chain: a product, its epilogue, a product of that epilogue's output,
  // its epilogue (a multilayer perceptron).
  if (matmuls == 2 && generics == 2) {
    bool ordered = matmulOps[0]->isBeforeInBlock(genericOps[0]) &&
                   genericOps[0]->isBeforeInBlock(matmulOps[1]) &&
                   matmulOps[1]->isBeforeInBlock(genericOps[1]);
    if (!ordered || genericOps[0].getOutputs().size() != 1 ||
        genericOps[0].getOutputs()[0] != matmulOps[1].getLhs())
      return emitOpError() << "with two spyre.matmul and two spyre.generic ops must be a chain: "
                              "a product, its epilogue, a product of the epilogue's output, "
                              "its epilogue";
    return success();
  }
  for (auto [i, matmul] : llvm::enumerate(matmulOps))
    if (generics && genericOps[0]->isBeforeInBlock(matmul))
      return emitOpError() << "may hold one spyre.matmul, or two sharing their lhs, before "
                              "its epilogue";
  if (matmuls == 2 && (matmulOps[1].getLhs() != matmulOps[0].getLhs() ||
                       matmulOps[1]->hasAttr("transpose_lhs") !=
                           matmulOps[0]->hasAttr("transpose_lhs")))
    return emitOpError() << "may hold two spyre.matmul ops only when they share their lhs";
  // Two products of one lhs may also each write an output of their own
  // (a layer's key and value projections), with no epilogue.
  if (matmuls && generics != 1 && !(matmuls == 2 && generics == 0))
    return emitOpError() << "must hold one spyre.generic after its spyre.matmul ops (the "
                            "epilogue), or two spyre.matmul ops and no generic, not "
                         << matmuls << " and " << generics;
  if (!matmuls && generics < 2)
    return emitOpError() << "must hold at least two spyre.generic ops";
  return success();
}

LogicalResult KernelOp::verify() {
  if (!getResultTypes().empty())
    return emitOpError("kernels return nothing: write results into argument "
                       "buffers");
  for (auto [i, type] : llvm::enumerate(getArgumentTypes()))
    if (!isa<BufferType, IndexType>(type))
      return emitOpError() << "argument #" << i << " has type " << type
                           << "; kernel arguments are buffers or index values";
  if (getBody().empty())
    return emitOpError("needs a body");
  if (getBody().front().empty() || !isa<ReturnOp>(getBody().front().back()))
    return emitOpError("body must end with 'spyre.return'");
  return success();
}

//===----------------------------------------------------------------------===//
// AllocOp, DimOp
//===----------------------------------------------------------------------===//

LogicalResult AllocOp::verify() {
  int64_t dynamic = bufferType(getResult()).getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != dynamic)
    return emitOpError() << "type has " << dynamic
                         << " dynamic dimensions but "
                         << getDynamicSizes().size() << " sizes are given";
  return success();
}

/// A buffer that is only ever freed is not needed.
LogicalResult AllocOp::canonicalize(AllocOp op, PatternRewriter &rewriter) {
  if (op.use_empty() ||
      !llvm::all_of(op->getUsers(), [](Operation *u) { return isa<DeallocOp>(u); }))
    return failure();
  for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
    rewriter.eraseOp(user);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult DimOp::verify() {
  int64_t rank = bufferType(getSource()).getRank();
  if (getIndex() < 0 || getIndex() >= rank)
    return emitOpError() << "dimension " << getIndex()
                         << " is out of range for a buffer of rank " << rank;
  return success();
}

OpFoldResult DimOp::fold(FoldAdaptor) {
  BufferType type = bufferType(getSource());
  if (getIndex() < 0 || getIndex() >= type.getRank() ||
      type.isDynamicDim(getIndex()))
    return {};
  return IntegerAttr::get(IndexType::get(getContext()),
                          type.getDimSize(getIndex()));
}

//===----------------------------------------------------------------------===//
// Matmul and BatchMatmul
//===----------------------------------------------------------------------===//

static bool isMatmulInputType(Type t) { return t.isF16() || t.isBF16() || t.isF32(); }

template <typename OpTy>
static LogicalResult verifyMatmul(OpTy op) {
  constexpr int64_t rank = OpTy::kRank;
  BufferType lhs = bufferType(op.getLhs()), rhs = bufferType(op.getRhs()),
             out = bufferType(op.getInit());
  for (auto [name, type] : {std::pair<StringRef, BufferType>{"lhs", lhs},
                            {"rhs", rhs}, {"init", out}}) {
    if (type.getRank() != rank)
      return op.emitOpError() << name << " must have rank " << rank
                              << ", got " << type.getRank();
    if (!isMatmulInputType(type.getElementType()))
      return op.emitOpError() << name << " element type "
                              << type.getElementType()
                              << " is not f16, bf16 or f32";
  }
  if (lhs.getElementType() != rhs.getElementType())
    return op.emitOpError() << "lhs and rhs element types differ: "
                            << lhs.getElementType() << " vs "
                            << rhs.getElementType();
  // Logical (M, K) x (K, N) -> (M, N) after the optional transposes.
  int64_t b = rank - 2;
  int64_t m = lhs.getDimSize(b + (op.getTransposeLhs() ? 1 : 0));
  int64_t kl = lhs.getDimSize(b + (op.getTransposeLhs() ? 0 : 1));
  int64_t kr = rhs.getDimSize(b + (op.getTransposeRhs() ? 1 : 0));
  int64_t n = rhs.getDimSize(b + (op.getTransposeRhs() ? 0 : 1));
  if (!compatible(kl, kr))
    return op.emitOpError() << "contraction sizes differ: lhs has K = "
                            << dimString(kl) << ", rhs has K = "
                            << dimString(kr);
  if (!compatible(m, out.getDimSize(b)) || !compatible(n, out.getDimSize(b + 1)))
    return op.emitOpError() << "init has shape " << dimString(out.getDimSize(b))
                            << "x" << dimString(out.getDimSize(b + 1))
                            << " but the product is " << dimString(m) << "x"
                            << dimString(n);
  if (rank == 3) {
    int64_t bl = lhs.getDimSize(0), br = rhs.getDimSize(0),
            bo = out.getDimSize(0);
    if (!compatible(bl, br) || !compatible(bl, bo) || !compatible(br, bo))
      return op.emitOpError() << "batch sizes differ: " << dimString(bl)
                              << ", " << dimString(br) << ", "
                              << dimString(bo);
  }
  return success();
}

LogicalResult MatmulOp::verify() { return verifyMatmul(*this); }
LogicalResult BatchMatmulOp::verify() { return verifyMatmul(*this); }

template <typename OpTy>
static void matmulEffects(
    OpTy op, SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &op.getLhsMutable());
  effects.emplace_back(MemoryEffects::Read::get(), &op.getRhsMutable());
  if (op.getAccumulate())
    effects.emplace_back(MemoryEffects::Read::get(), &op.getInitMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &op.getInitMutable());
}

void MatmulOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  matmulEffects(*this, effects);
}
void BatchMatmulOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  matmulEffects(*this, effects);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// Replaces `op` by a plain copy from `source` into `target`.
static LogicalResult replaceByCopy(Operation *op, Value source, Value target,
                                   PatternRewriter &rewriter) {
  rewriter.replaceOpWithNewOp<CopyOp>(op, source, target);
  return success();
}

LogicalResult CopyOp::verify() {
  BufferType src = bufferType(getSource()), dst = bufferType(getTarget());
  if (failed(verifyCompatibleShape(src.getShape(), dst.getShape())))
    return emitOpError() << "source and target shapes differ";
  return verifySameElementType(*this, getSource(), getTarget(),
                               "source and target");
}

LogicalResult CopyOp::canonicalize(CopyOp op, PatternRewriter &rewriter) {
  if (op.getSource() != op.getTarget())
    return failure();
  rewriter.eraseOp(op);
  return success();
}

LogicalResult PermuteOp::verify() {
  BufferType src = bufferType(getSource()), dst = bufferType(getTarget());
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != src.getRank() ||
      src.getRank() != dst.getRank())
    return emitOpError() << "permutation of size " << perm.size()
                         << " does not match ranks " << src.getRank()
                         << " and " << dst.getRank();
  if (!isPermutationVector(perm))
    return emitOpError("permutation is not a permutation of the dimensions");
  for (auto [i, p] : llvm::enumerate(perm))
    if (!compatible(dst.getDimSize(i), src.getDimSize(p)))
      return emitOpError() << "target dim " << i << " has size "
                           << dimString(dst.getDimSize(i))
                           << " but source dim " << p << " has size "
                           << dimString(src.getDimSize(p));
  return verifySameElementType(*this, getSource(), getTarget(),
                               "source and target");
}

LogicalResult PermuteOp::canonicalize(PermuteOp op, PatternRewriter &rewriter) {
  if (!isIdentityPermutation(op.getPermutation()))
    return failure();
  return replaceByCopy(op, op.getSource(), op.getTarget(), rewriter);
}

LogicalResult BroadcastOp::verify() {
  BufferType src = bufferType(getSource()), dst = bufferType(getTarget());
  ArrayRef<int64_t> dims = getDimensions();
  if (src.getRank() + static_cast<int64_t>(dims.size()) != dst.getRank())
    return emitOpError() << "source rank " << src.getRank() << " plus "
                         << dims.size() << " new dimensions != target rank "
                         << dst.getRank();
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= dst.getRank())
      return emitOpError() << "new dimension " << d << " is out of range";
    if (i > 0 && dims[i - 1] >= d)
      return emitOpError("new dimensions must be strictly increasing");
  }
  int64_t srcDim = 0;
  for (int64_t i = 0; i < dst.getRank(); ++i) {
    if (llvm::is_contained(dims, i))
      continue;
    if (!compatible(dst.getDimSize(i), src.getDimSize(srcDim)))
      return emitOpError() << "target dim " << i << " has size "
                           << dimString(dst.getDimSize(i))
                           << " but source dim " << srcDim << " has size "
                           << dimString(src.getDimSize(srcDim));
    ++srcDim;
  }
  return verifySameElementType(*this, getSource(), getTarget(),
                               "source and target");
}

LogicalResult BroadcastOp::canonicalize(BroadcastOp op,
                                        PatternRewriter &rewriter) {
  if (!op.getDimensions().empty())
    return failure();
  return replaceByCopy(op, op.getSource(), op.getTarget(), rewriter);
}

LogicalResult SliceOp::verify() {
  BufferType src = bufferType(getSource()), dst = bufferType(getTarget());
  int64_t rank = src.getRank();
  if (dst.getRank() != rank)
    return emitOpError() << "source rank " << rank << " != target rank "
                         << dst.getRank();
  if (failed(verifyListOfOperandsOrIntegers(*this, "offset", rank,
                                            getStaticOffsets(), getOffsets())))
    return failure();
  if (static_cast<int64_t>(getStrides().size()) != rank)
    return emitOpError() << "expected " << rank << " strides, got "
                         << getStrides().size();
  for (int64_t i = 0; i < rank; ++i) {
    int64_t offset = getStaticOffsets()[i], stride = getStrides()[i];
    if (stride <= 0)
      return emitOpError() << "stride of dim " << i << " must be positive";
    if (!ShapedType::isDynamic(offset) && offset < 0)
      return emitOpError() << "offset of dim " << i << " is negative";
    int64_t size = dst.getDimSize(i), bound = src.getDimSize(i);
    if (ShapedType::isDynamic(offset) || ShapedType::isDynamic(size) ||
        ShapedType::isDynamic(bound) || size == 0)
      continue;
    // Overflow-checked: an offset near 2^63 wrapped round to pass the check
    // and crashed the tiling later (found by scripts/fuzz.py).
    int64_t reach, last;
    if (llvm::MulOverflow(size - 1, stride, reach) || llvm::AddOverflow(offset, reach, last))
      return emitOpError() << "dim " << i << " reads an index beyond 2^63 of a source of size "
                           << bound;
    if (last >= bound)
      return emitOpError() << "dim " << i << " reads index " << last
                           << " of a source of size " << bound;
  }
  return verifySameElementType(*this, getSource(), getTarget(),
                               "source and target");
}

LogicalResult SliceOp::canonicalize(SliceOp op, PatternRewriter &rewriter) {
  BufferType src = bufferType(op.getSource()), dst = bufferType(op.getTarget());
  bool whole = src.hasStaticShape() && src.getShape() == dst.getShape() &&
               llvm::all_of(op.getStaticOffsets(), [](int64_t o) { return o == 0; }) &&
               llvm::all_of(op.getStrides(), [](int64_t s) { return s == 1; });
  if (!whole)
    return failure();
  return replaceByCopy(op, op.getSource(), op.getTarget(), rewriter);
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  BufferType dst = bufferType(getTarget());
  int64_t rank = dst.getRank(), dim = getDim();
  if (dim < 0 || dim >= rank)
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << rank;
  int64_t total = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    BufferType src = bufferType(input);
    if (src.getRank() != rank)
      return emitOpError() << "input #" << i << " has rank " << src.getRank()
                           << ", target has rank " << rank;
    if (failed(verifySameElementType(*this, input, getTarget(),
                                     "input and target")))
      return failure();
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && !compatible(src.getDimSize(d), dst.getDimSize(d)))
        return emitOpError() << "input #" << i << " dim " << d
                             << " has size " << dimString(src.getDimSize(d))
                             << ", target has "
                             << dimString(dst.getDimSize(d));
    if (ShapedType::isDynamic(total) || src.isDynamicDim(dim))
      total = ShapedType::kDynamic;
    else
      total += src.getDimSize(dim);
  }
  if (!compatible(total, dst.getDimSize(dim)))
    return emitOpError() << "inputs add up to " << total << " along dim "
                         << dim << " but the target has "
                         << dst.getDimSize(dim);
  return success();
}

LogicalResult ConcatOp::canonicalize(ConcatOp op, PatternRewriter &rewriter) {
  if (op.getInputs().size() != 1)
    return failure();
  return replaceByCopy(op, op.getInputs().front(), op.getTarget(), rewriter);
}

/// A gather's or scatter's `name` (axis, source_axis) must be a dimension
/// of its table.
static LogicalResult verifyTableDim(Operation *op, StringRef name, int64_t dim,
                                    BufferType table) {
  if (dim < 0 || dim >= table.getRank())
    return op->emitOpError() << name << " " << dim << " is out of range for a table "
                             << "of rank " << table.getRank();
  return success();
}

/// The shape a gather's target or a scatter's source has: the table's
/// without dimension `axis`, the indices' shape at `at`.
static SmallVector<int64_t> tableShapeWithIndices(BufferType table, int64_t axis,
                                                  BufferType indices, int64_t at) {
  SmallVector<int64_t> shape(table.getShape());
  shape.erase(shape.begin() + axis);
  shape.insert(shape.begin() + at, indices.getShape().begin(), indices.getShape().end());
  return shape;
}

LogicalResult GatherOp::verify() {
  BufferType table = bufferType(getTable()), indices = bufferType(getIndices()),
             dst = bufferType(getTarget());
  int64_t axis = getAxis();
  if (failed(verifyTableDim(*this, "axis", axis, table)))
    return failure();
  Type indexType = indices.getElementType();
  if (!indexType.isSignlessInteger(32) && !indexType.isSignlessInteger(8))
    return emitOpError() << "indices must be i32 or i8, got " << indexType;
  if (failed(verifyCompatibleShape(tableShapeWithIndices(table, axis, indices, axis),
                                   dst.getShape())))
    return emitOpError() << "target shape must be table[:axis] ++ indices ++ "
                            "table[axis+1:]";
  return verifySameElementType(*this, getTable(), getTarget(),
                               "table and target");
}

LogicalResult ScatterOp::verify() {
  BufferType table = bufferType(getTable()), indices = bufferType(getIndices()),
             source = bufferType(getSource());
  int64_t axis = getAxis();
  if (failed(verifyTableDim(*this, "axis", axis, table)))
    return failure();
  if (!indices.getElementType().isSignlessInteger(32))
    return emitOpError() << "indices must be i32, got " << indices.getElementType();
  int64_t at = getSourceAxis().value_or(axis);
  if (failed(verifyTableDim(*this, "source_axis", at, table)))
    return failure();
  if (failed(verifyCompatibleShape(tableShapeWithIndices(table, axis, indices, at),
                                   source.getShape())))
    return emitOpError() << "source shape must be table[:axis] ++ table[axis+1:] with "
                            "the indices' shape at source_axis (axis if not given)";
  return verifySameElementType(*this, getSource(), getTable(), "source and table");
}

LogicalResult Conv2dOp::verify() {
  BufferType in = bufferType(getInput()), w = bufferType(getWeight()),
             out = bufferType(getTarget());
  for (auto [name, type] : {std::pair{"input", in}, {"weight", w}, {"target", out}})
    if (type.getRank() != 4)
      return emitOpError() << name << " must have rank 4, not " << type.getRank();
  if (!isa<FloatType>(in.getElementType()))
    return emitOpError() << "input must hold floats, not " << in.getElementType();
  for (Value other : {getWeight(), getTarget()})
    if (failed(verifySameElementType(*this, getInput(), other, "input and operand")))
      return failure();
  ArrayRef<int64_t> padding = getPadding(), dilation = getDilation();
  if ((padding.size() != 2 && padding.size() != 4) || dilation.size() != 2 ||
      (getStride() && getStride()->size() != 2))
    return emitOpError() << "stride and dilation must have two values (rows, columns), "
                            "padding two (rows, columns) or four (before them, then after)";
  std::array<int64_t, 2> stride = getStrides();
  for (int64_t d : {0, 1}) {
    if (stride[d] < 1)
      return emitOpError() << "stride must be at least 1, not " << stride[d];
    for (int64_t p : padding)
      if (p < 0)
        return emitOpError() << "padding must not be negative, not " << p;
    if (dilation[d] < 1)
      return emitOpError() << "dilation must be at least 1, not " << dilation[d];
  }
  int64_t groups = getGroups();
  if (groups < 1)
    return emitOpError() << "groups must be at least 1, not " << groups;
  for (auto [name, channels] : {std::pair{"input", in.getDimSize(1)}, {"output", w.getDimSize(0)}})
    if (!ShapedType::isDynamic(channels) && channels % groups != 0)
      return emitOpError() << "the " << name << " channels (" << channels
                           << ") must divide into " << groups << " groups";
  int64_t perGroup =
      ShapedType::isDynamic(in.getDimSize(1)) ? ShapedType::kDynamic : in.getDimSize(1) / groups;
  if (!compatible(w.getDimSize(1), perGroup))
    return emitOpError() << "weight's input channels (" << dimString(w.getDimSize(1))
                         << ") must be the input's" << (groups > 1 ? " per group (" : " (")
                         << dimString(perGroup) << ")";
  if (!compatible(out.getDimSize(0), in.getDimSize(0)) ||
      !compatible(out.getDimSize(1), w.getDimSize(0)))
    return emitOpError() << "target must be images x the weight's output channels ("
                         << dimString(in.getDimSize(0)) << "x" << dimString(w.getDimSize(0))
                         << " first)";
  for (int64_t d : {0, 1}) {
    int64_t size = in.getDimSize(2 + d), taps = w.getDimSize(2 + d);
    if (ShapedType::isDynamic(size) || ShapedType::isDynamic(taps))
      continue;
    int64_t padded = size + padding[d] + padding[padding.size() == 4 ? 2 + d : d];
    int64_t reach = padded - dilation[d] * (taps - 1);
    int64_t expected = reach < 1 ? reach : (reach - 1) / stride[d] + 1;
    if (expected < 1)
      return emitOpError() << "the kernel (" << taps << " taps, dilation " << dilation[d]
                           << ") is larger than the padded input (" << padded << ")";
    if (!compatible(out.getDimSize(2 + d), expected))
      return emitOpError() << "target " << (d == 0 ? "height" : "width") << " must be "
                           << expected << ", not " << dimString(out.getDimSize(2 + d));
  }
  for (auto [name, vectorValue] : {std::pair{"bias", getBias()}, {"scale", getScale()}}) {
    if (!vectorValue)
      continue;
    BufferType vector = bufferType(vectorValue);
    if (vector.getRank() != 1 || !compatible(vector.getDimSize(0), w.getDimSize(0)))
      return emitOpError() << name << " must have one value per output channel ("
                           << dimString(w.getDimSize(0)) << "), not " << vector;
    // f32 keeps a folded BatchNorm's scale and shift as eager computes them.
    Type element = vector.getElementType();
    if (element != in.getElementType() && !element.isF32())
      return emitOpError() << name << " must hold the input's element type ("
                           << in.getElementType() << ") or f32, not " << element;
  }
  if (Value residualValue = getResidual()) {
    BufferType residual = bufferType(residualValue);
    if (residual.getShape() != out.getShape())
      return emitOpError() << "residual must be shaped as the target (" << out << "), not "
                           << residual;
    if (failed(verifySameElementType(*this, getInput(), residualValue, "input and residual")))
      return failure();
  }
  if (std::optional<APFloat> reluMax = getReluMax()) {
    if (!getRelu())
      return emitOpError() << "relu_max needs relu";
    if (!reluMax->isFiniteNonZero() || reluMax->isNegative())
      return emitOpError() << "relu_max must be positive and finite";
  }
  return success();
}

static DenseI64ArrayAttr layoutOf(AttentionOp op, unsigned operand) {
  return operand == 0 ? op.getQueryLayoutAttr()
                      : operand == 1 ? op.getKeyLayoutAttr() : op.getValueLayoutAttr();
}

AttentionOp::View AttentionOp::getView(unsigned operand) {
  if (DenseI64ArrayAttr layout = layoutOf(*this, operand)) {
    ArrayRef<int64_t> l = layout.asArrayRef();
    if (l.size() == 7)
      return {{l[0], l[1], l[2]}, l[3], l[4], l[5], l[6]};
    return {{l[0], l[1], l[2]}, l[3], l[4], std::max<int64_t>(l[0], 1), 0};
  }
  BufferType type = bufferType(getOperand(operand));
  int64_t rows = type.getDimSize(1), cols = type.getDimSize(2);
  int64_t perHead = ShapedType::isDynamic(rows) || ShapedType::isDynamic(cols)
                        ? ShapedType::kDynamic
                        : rows * cols;
  int64_t heads = type.getDimSize(0);
  int64_t perBatch = ShapedType::isDynamic(heads) ? 1 : std::max<int64_t>(heads, 1);
  return {{heads, rows, cols}, perHead, cols, perBatch, 0};
}

LogicalResult AttentionOp::verify() {
  static constexpr const char *names[] = {"query", "key", "value"};
  for (unsigned i = 0; i < 3; ++i) {
    BufferType type = bufferType(getOperand(i));
    DenseI64ArrayAttr layout = layoutOf(*this, i);
    if (!layout) {
      if (type.getRank() != 3)
        return emitOpError() << names[i]
                             << " must have rank 3 (heads x length x head size), or be 1-D "
                                "with a layout, not rank "
                             << type.getRank();
      continue;
    }
    ArrayRef<int64_t> l = layout.asArrayRef();
    if (type.getRank() != 1)
      return emitOpError() << names[i] << "_layout needs a 1-D " << names[i]
                           << " (the view's span), not " << type;
    if ((l.size() != 5 && l.size() != 7) || llvm::any_of(l, [](int64_t x) { return x < 0; }))
      return emitOpError() << names[i]
                           << "_layout must be [heads, length, head size, head stride, row "
                              "stride] or [..., heads per batch, batch stride], none negative";
    if (l.size() == 7 && (l[5] == 0 || l[0] % l[5] != 0))
      return emitOpError() << names[i] << "_layout's heads per batch (" << l[5]
                           << ") must divide its heads (" << l[0] << ")";
    // The last element's offset, plus one: the buffer must hold it. In 128
    // bits (every term a product of two values below 2^63), so that sizes
    // near 2^63 are refused here rather than wrap.
    using u128 = unsigned __int128;
    const u128 limit = u128(1) << 63;
    u128 span = 0, headsByLength = u128(l[0]) * u128(l[1]);
    if (!llvm::is_contained(l.take_front(3), 0)) {
      int64_t last = l[0] - 1, perBatch = l.size() == 7 ? l[5] : l[0];
      u128 batchStride = l.size() == 7 ? u128(l[6]) : 0;
      span = u128(last / perBatch) * batchStride + u128(last % perBatch) * u128(l[3]) +
             u128(l[1] - 1) * u128(l[4]) + u128(l[2]);
    }
    if (span >= limit || headsByLength >= limit || headsByLength * u128(l[2]) >= limit)
      return emitOpError() << names[i] << "_layout spans or holds 2^63 elements or more";
    if (!type.isDynamicDim(0) && u128(type.getDimSize(0)) < span)
      return emitOpError() << names[i] << "_layout spans " << int64_t(span) << " elements, more than the "
                           << type.getDimSize(0) << " of its buffer";
  }
  auto logical = [&](unsigned i) {
    return BufferType::get(getView(i).shape, bufferType(getOperand(i)).getElementType());
  };
  BufferType q = logical(0), k = logical(1), v = logical(2), out = bufferType(getTarget());
  if (out.getRank() == 4) {
    // batch x Lq x heads per batch x Dv: each query row holds its heads.
    int64_t batch = out.getDimSize(0), perBatch = out.getDimSize(2);
    bool heads = ShapedType::isDynamic(batch) || ShapedType::isDynamic(perBatch) ||
                 compatible(batch * perBatch, q.getDimSize(0));
    if (!heads || !compatible(out.getDimSize(1), q.getDimSize(1)) ||
        !compatible(out.getDimSize(3), v.getDimSize(2)))
      return emitOpError() << "a rank-4 target (" << dimString(batch) << "x"
                           << dimString(out.getDimSize(1)) << "x" << dimString(perBatch) << "x"
                           << dimString(out.getDimSize(3))
                           << ") must be batch x query length x heads per batch x value head "
                              "size, with batch x heads per batch = "
                           << dimString(q.getDimSize(0)) << " heads, query length "
                           << dimString(q.getDimSize(1)) << ", value head size "
                           << dimString(v.getDimSize(2));
    out = BufferType::get({q.getDimSize(0), q.getDimSize(1), v.getDimSize(2)},
                          out.getElementType());
  } else if (out.getRank() != 3) {
    return emitOpError() << "target must have rank 3 (heads x length x head size) or 4 (batch "
                            "x length x heads per batch x head size), not "
                         << out.getRank();
  }
  if (!isa<FloatType>(q.getElementType()))
    return emitOpError() << "query must hold floats, not " << q.getElementType();
  for (Value other : {getKey(), getValue(), getTarget()})
    if (failed(verifySameElementType(*this, getQuery(), other, "query and operand")))
      return failure();
  auto dims = [](BufferType t) {
    return std::to_string(t.getDimSize(0)) + "x" + std::to_string(t.getDimSize(1)) + "x" +
           std::to_string(t.getDimSize(2));
  };
  if (!compatible(k.getDimSize(0), v.getDimSize(0)) ||
      !compatible(k.getDimSize(1), v.getDimSize(1)))
    return emitOpError() << "key (" << dims(k) << ") and value (" << dims(v)
                         << ") must have the same heads and length";
  if (!compatible(q.getDimSize(2), k.getDimSize(2)))
    return emitOpError() << "query and key head sizes differ: " << dimString(q.getDimSize(2))
                         << " vs " << dimString(k.getDimSize(2));
  if (!compatible(out.getDimSize(0), q.getDimSize(0)) ||
      !compatible(out.getDimSize(1), q.getDimSize(1)) ||
      !compatible(out.getDimSize(2), v.getDimSize(2)))
    return emitOpError() << "target (" << dims(out) << ") must be heads x query length x "
                         << "value head size (" << dimString(q.getDimSize(0)) << "x"
                         << dimString(q.getDimSize(1)) << "x" << dimString(v.getDimSize(2))
                         << ")";
  auto divides = [](int64_t part, int64_t whole) {
    return ShapedType::isDynamic(part) || ShapedType::isDynamic(whole) ||
           (part > 0 && whole % part == 0);
  };
  if (!divides(k.getDimSize(0), q.getDimSize(0)))
    return emitOpError() << "key/value heads (" << dimString(k.getDimSize(0))
                         << ") must divide query heads (" << dimString(q.getDimSize(0)) << ")";
  if (Value maskValue = getMask()) {
    BufferType mask = bufferType(maskValue);
    if (mask.getRank() != 3 || !isa<FloatType>(mask.getElementType()))
      return emitOpError() << "mask must be a rank-3 float buffer (batch x 1 or query length "
                              "x key length), not "
                           << mask;
    if (!divides(mask.getDimSize(0), q.getDimSize(0)))
      return emitOpError() << "mask batch (" << dimString(mask.getDimSize(0))
                           << ") must divide query heads (" << dimString(q.getDimSize(0))
                           << ")";
    if (mask.getDimSize(1) != 1 && !compatible(mask.getDimSize(1), q.getDimSize(1)))
      return emitOpError() << "mask rows (" << dimString(mask.getDimSize(1))
                           << ") must be 1 or the query length ("
                           << dimString(q.getDimSize(1)) << ")";
    if (!compatible(mask.getDimSize(2), k.getDimSize(1)))
      return emitOpError() << "mask columns (" << dimString(mask.getDimSize(2))
                           << ") must be the key length (" << dimString(k.getDimSize(1))
                           << ")";
  }
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError() << "scale must be finite, not "
                         << getScale().convertToDouble();
  return success();
}

LogicalResult FillOp::verify() {
  Type elementType = bufferType(getTarget()).getElementType();
  if (getValue().getType() != elementType)
    return emitOpError() << "value of type " << getValue().getType()
                         << " does not match element type " << elementType;
  return success();
}

LogicalResult ConstantOp::verify() {
  auto valueType = cast<ShapedType>(getValue().getType());
  BufferType type = bufferType(getResult());
  if (!type.hasStaticShape())
    return emitOpError("constant buffers need a static shape");
  if (valueType.getShape() != type.getShape() ||
      valueType.getElementType() != type.getElementType())
    return emitOpError() << "value of type " << valueType
                         << " does not match the buffer type";
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

#define GET_OP_CLASSES
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.cpp.inc"
