//===- CostModel.cpp - what kernel-level ops cost on the card -------------===//

#include "spyre-mlir/Dialect/Spyre/Analysis/CostModel.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::spyre;

namespace {

/// Bytes of an element on the device: 16-bit floats are DLFloat16, i1 a byte.
int64_t deviceElementBytes(Type t) {
  if (t.isF16() || t.isBF16())
    return 2;
  return t.isInteger(1) ? 1 : (t.getIntOrFloatBitWidth() + 7) / 8;
}

} // namespace

double mlir::spyre::sfuPasses(Operation &op, const ::spyre::Arch &arch) {
  if (isa<arith::ConstantOp, arith::ExtFOp, arith::TruncFOp>(op))
    return 0;
  bool transcendental =
      isa<math::ExpOp, math::LogOp, math::Log1pOp, math::ExpM1Op, math::TanhOp, math::ErfOp,
          math::SqrtOp, math::RsqrtOp, math::SinOp, math::CosOp, math::TanOp, math::AtanOp,
          math::Atan2Op, math::PowFOp, math::Log2Op, math::Log10Op, math::Exp2Op, math::ErfcOp,
          arith::DivFOp>(op);
  return transcendental ? double(arch.sfuTranscendentalDivisor) : 1;
}

namespace {

/// LX bytes an element of `v` streams when an SFU instruction reads or
/// writes it in a generic's body, at least: a block argument its buffer's
/// element (none when its map leaves out a loop: a per-row value the
/// instruction holds), a conversion or a value only narrowed or yielded the
/// narrower type (the SFU converts as it reads and rounds on store), a
/// constant nothing (an immediate); anything else its own type.
double streamedBytes(Value v, GenericOp generic) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    AffineMap map = generic.getInputMap(arg.getArgNumber());
    for (unsigned loop = 0; loop < unsigned(generic.getNumLoops()); ++loop)
      if (!map.isFunctionOfDim(loop))
        return 0;
    return double(deviceElementBytes(v.getType()));
  }
  Operation *def = v.getDefiningOp();
  if (isa<arith::ConstantOp>(def))
    return 0;
  if (isa<arith::ExtFOp, arith::TruncFOp>(def))
    return streamedBytes(def->getOperand(0), generic);
  double bytes = double(deviceElementBytes(v.getType()));
  for (Operation *user : v.getUsers())
    if (!isa<arith::TruncFOp, YieldOp>(user))
      return bytes;
  for (Operation *user : v.getUsers())
    if (isa<arith::TruncFOp>(user))
      bytes = std::min(bytes, double(deviceElementBytes(user->getResult(0).getType())));
  return bytes;
}

/// The points of `generic`'s domain at which the body value `v` can
/// differ: the product of the loops it depends on (through the maps of the
/// inputs it reads and the index expressions it uses). An op over a value
/// that varies along fewer loops (a threshold per row, a score per column)
/// need not run at every point, so counting it at every point would make
/// the bound exceed what the card does.
double distinctPoints(Value v, GenericOp generic, DenseMap<Value, uint64_t> &loopsOf) {
  auto loopsOfMap = [&](AffineMap map) {
    uint64_t mask = 0;
    for (unsigned loop = 0; loop < unsigned(generic.getNumLoops()); ++loop)
      if (map.isFunctionOfDim(loop))
        mask |= uint64_t{1} << loop;
    return mask;
  };
  std::function<uint64_t(Value)> loops = [&](Value value) -> uint64_t {
    if (auto it = loopsOf.find(value); it != loopsOf.end())
      return it->second;
    uint64_t mask = 0;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      mask = loopsOfMap(generic.getInputMap(arg.getArgNumber()));
    } else if (auto expr = value.getDefiningOp<IndexExprOp>()) {
      mask = loopsOfMap(expr.getMap());
    } else if (Operation *def = value.getDefiningOp()) {
      for (Value operand : def->getOperands())
        mask |= loops(operand);
    }
    loopsOf[value] = mask;
    return mask;
  };
  uint64_t mask = loops(v);
  double points = 1;
  for (auto [loop, size] : llvm::enumerate(generic.getStaticDomain()))
    if (mask >> loop & 1)
      points *= double(size);
  return points;
}

/// SFU passes over each score of spyre.attention: the maximum, the
/// subtraction and the exponential (the PT sums the probabilities,
/// AttentionPlan.cpp).
constexpr double kAttentionPassesPerScore = 3;

/// The elements of operand `i` of `op` that `op` reads when that is not
/// its whole buffer: an attention operand read through a strided view (the
/// heads of a projection, whose buffer spans the other heads too), a
/// gather's table (the gathered elements: an embedding lookup reads a few
/// rows of a large table), a scatter's table (the elements written: a
/// cache update writes a few rows of a large cache).
std::optional<double> elementsRead(Operation *op, unsigned i) {
  if (auto attention = dyn_cast<AttentionOp>(op); attention && i < 3)
    return double(computeProduct(attention.getView(i).shape));
  if (auto gather = dyn_cast<GatherOp>(op); gather && i == 0) {
    auto target = cast<BufferType>(gather.getTarget().getType());
    if (target.hasStaticShape())
      return double(target.getNumElements());
  }
  if (auto scatter = dyn_cast<ScatterOp>(op); scatter && i == 2) {
    auto source = cast<BufferType>(scatter.getSource().getType());
    if (source.hasStaticShape())
      return double(source.getNumElements());
  }
  return std::nullopt;
}

/// The elements of `arg` its ops read when each of them reads less than
/// the whole buffer (elementsRead), else none.
std::optional<double> viewedElements(BlockArgument arg) {
  if (arg.use_empty())
    return std::nullopt;
  double elements = 0;
  for (OpOperand &use : arg.getUses()) {
    std::optional<double> read = elementsRead(use.getOwner(), use.getOperandNumber());
    if (!read)
      return std::nullopt;
    elements = std::max(elements, *read);
  }
  return elements;
}

} // namespace

std::optional<OpCost> CostModel::estimate(Operation *op, std::string &why) const {
  OpCost cost;
  // Compulsory traffic: every buffer operand once.
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    auto type = dyn_cast<BufferType>(operand.getType());
    if (!type)
      continue;
    if (!type.hasStaticShape()) {
      why = "operand " + std::to_string(i) + " has a dynamic shape";
      return std::nullopt;
    }
    // A strided view (an attention operand's layout) or a gather's table
    // reads the elements it reads, not the span of its buffer.
    double elements =
        elementsRead(op, unsigned(i)).value_or(double(type.getNumElements()));
    double bytes = elements * deviceElementBytes(type.getElementType());
    cost.deviceBytes += bytes;
    if (hasEffect<MemoryEffects::Write>(op, operand))
      cost.writtenBytes += bytes;
  }
  double cores = double(arch.cores);
  bool known = llvm::TypeSwitch<Operation *, bool>(op)
                   .Case<MatmulOp, BatchMatmulOp>([&](auto mm) {
                     auto lhs = cast<BufferType>(mm.getLhs().getType());
                     auto out = cast<BufferType>(mm.getInit().getType());
                     int64_t k = lhs.getDimSize(mm.getTransposeLhs() ? lhs.getRank() - 2
                                                                     : lhs.getRank() - 1);
                     cost.flops = 2.0 * double(out.getNumElements()) * double(k);
                     cost.computeCycles = cost.flops / 2 / (arch.macsPerCycle() * cores);
                     return true;
                   })
                   .Case([&](AttentionOp attention) {
                     // Both products over every (query, key) pair that
                     // attends (causal: key j <= query i), and the online
                     // softmax's SFU passes over each score. The views are
                     // kept: their shapes are what the ArrayRefs would see.
                     AttentionOp::View qv = attention.getView(0), kv = attention.getView(1),
                                       vv = attention.getView(2);
                     ArrayRef<int64_t> q = qv.shape, k = kv.shape, v = vv.shape;
                     double lq = double(q[1]), lk = double(k[1]);
                     // Rows i < lk see i + 1 keys, the others all lk.
                     double seen = !attention.getCausal() ? lq * lk
                                   : lq <= lk ? lq * (lq + 1) / 2
                                              : lk * (lk + 1) / 2 + (lq - lk) * lk;
                     double pairs = double(q[0]) * seen;
                     cost.flops = 2.0 * pairs * double(q[2] + v[2]);
                     cost.vectorOps = pairs * kAttentionPassesPerScore;
                     cost.computeCycles =
                         std::max(cost.flops / 2 / arch.macsPerCycle(),
                                  cost.vectorOps / arch.sfuRate(4, false, false)) /
                         cores;
                     return true;
                   })
                   .Case([&](Conv2dOp conv) {
                     // Every tap's product over every output position (a
                     // group's input channels: the block-diagonal zeros are
                     // the schedule's cost, not the op's).
                     auto w = cast<BufferType>(conv.getWeight().getType());
                     auto out = cast<BufferType>(conv.getTarget().getType());
                     cost.flops = 2.0 * double(out.getNumElements()) *
                                  double(w.getDimSize(1) * w.getDimSize(2) * w.getDimSize(3));
                     cost.computeCycles = cost.flops / 2 / (arch.macsPerCycle() * cores);
                     return true;
                   })
                   .Case([&](GenericOp generic) {
                     if (llvm::any_of(generic.getStaticDomain(), ShapedType::isDynamic)) {
                       why = "the domain has a dynamic size";
                       return false;
                     }
                     double points = 1;
                     for (int64_t size : generic.getStaticDomain())
                       points *= double(size);
                     // Each body op is an SFU instruction streaming its
                     // operands and result, whose bytes per element may cap
                     // its rate (the SFUs' LX port; streamedBytes counts
                     // them at their least, so that the bound is one);
                     // transcendental functions run at a fraction of it.
                     // Each op counts at the points where its result can
                     // differ (distinctPoints).
                     double perPoint = 0, cycles = 0;
                     DenseMap<Value, uint64_t> loopsOf;
                     Block &body = generic.getBody().front();
                     for (Operation &inner : body.without_terminator()) {
                       double passes = sfuPasses(inner, arch);
                       if (passes == 0 || inner.getNumResults() != 1)
                         continue;
                       double share =
                           distinctPoints(inner.getResult(0), generic, loopsOf) / points;
                       double bytes = streamedBytes(inner.getResult(0), generic);
                       for (Value operand : inner.getOperands())
                         bytes += streamedBytes(operand, generic);
                       perPoint += passes * share;
                       cycles += passes * share / arch.sfuRate(bytes, false, false);
                     }
                     // A copy still streams every element; a reduction
                     // combines every yielded value at the reduction rate.
                     double yielded = 0;
                     for (Value v : body.getTerminator()->getOperands())
                       yielded += streamedBytes(v, generic);
                     bool reduction = !generic.getReductionLoops().empty();
                     if (!reduction && perPoint == 0) {
                       perPoint = 1;
                       cycles = 1 / arch.sfuRate(2 * yielded, false, false);
                     }
                     if (reduction)
                       cycles += 1 / arch.sfuRate(yielded, true, false);
                     cost.vectorOps = points * (perPoint + (reduction ? 1 : 0));
                     cost.computeCycles = points * cycles / cores;
                     return true;
                   })
                   .Case<CopyOp, PermuteOp, BroadcastOp, SliceOp, ConcatOp, GatherOp, ScatterOp,
                         FillOp>(
                       [&](auto) { return true; }) // data movement: bytes only
                   .Default([&](Operation *) {
                     why = "no cost model for '" + op->getName().getStringRef().str() + "'";
                     return false;
                   });
  if (!known)
    return std::nullopt;
  cost.memoryCycles = cost.deviceBytes / arch.memoryBytesPerCycle();
  cost.busCycles = busCycles(cost);
  return cost;
}

std::optional<OpCost> CostModel::estimateKernel(KernelOp kernel, std::string &why) const {
  OpCost total;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (isa<AllocOp, DeallocOp, DimOp, ConstantOp, arith::ConstantOp>(op))
      continue;
    std::optional<OpCost> cost = estimate(&op, why);
    if (!cost)
      return std::nullopt;
    total.flops += cost->flops;
    total.vectorOps += cost->vectorOps;
    total.computeCycles += cost->computeCycles;
  }
  for (BlockArgument arg : kernel.getBody().getArguments()) {
    auto type = dyn_cast<BufferType>(arg.getType());
    if (!type)
      continue;
    if (!type.hasStaticShape()) {
      why = "argument " + std::to_string(arg.getArgNumber()) + " has a dynamic shape";
      return std::nullopt;
    }
    double bytes = viewedElements(arg).value_or(double(type.getNumElements())) *
                   deviceElementBytes(type.getElementType());
    total.deviceBytes += bytes;
    if (llvm::any_of(arg.getUsers(), [&](Operation *user) {
          return hasEffect<MemoryEffects::Write>(user, arg);
        }))
      total.writtenBytes += bytes;
  }
  total.memoryCycles = total.deviceBytes / arch.memoryBytesPerCycle();
  total.busCycles = busCycles(total);
  return total;
}

double CostModel::busCycles(const OpCost &cost) const {
  // A buffer both read and written counts as written only: the bound may
  // be low, never high.
  return arch.deviceCycles(cost.deviceBytes - cost.writtenBytes, cost.writtenBytes);
}
