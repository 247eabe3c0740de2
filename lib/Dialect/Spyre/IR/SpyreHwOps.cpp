//===- SpyreHwOps.cpp - hardware-level ops and #spyre.ref ------------------===//
//
// The hardware level mirrors the instruction set one to one, so its names
// (element types, functions) come from the ISA header shared with the
// simulator; the binary writer checks what only the whole program shows
// (bounds over loops) with the simulator's own validator.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "spyre-mlir/Isa/Isa.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

//===----------------------------------------------------------------------===//
// Program structure
//===----------------------------------------------------------------------===//

LogicalResult HwProgramOp::verify() {
  if (getNumCores() < 1)
    return emitOpError("needs at least one core");
  llvm::SmallDenseSet<int64_t> cores;
  for (Operation &op : getBody().front()) {
    if (auto core = dyn_cast<HwCoreOp>(op)) {
      // Range first: the set must never see INT64_MAX or INT64_MIN, its
      // empty and tombstone keys (found by scripts/fuzz.py).
      if (core.getCore() < 0 || core.getCore() >= getNumCores())
        return core.emitOpError() << "core " << core.getCore() << " is outside the program's "
                                  << getNumCores() << " cores";
      if (!cores.insert(core.getCore()).second)
        return core.emitOpError() << "core " << core.getCore() << " has two streams";
      continue;
    }
    if (!isa<HwBufferOp>(op))
      return op.emitOpError("cannot appear directly in a spyre.hw.program");
  }
  return success();
}

LogicalResult HwBufferOp::verify() {
  auto type = cast<BufferType>(getType());
  if (!type.hasStaticShape())
    return emitOpError("device buffers need a static shape");
  if (type.getRank() > ISA::kMaxRank)
    return emitOpError() << "has rank " << type.getRank() << "; the program binary holds at most "
                         << ISA::kMaxRank << " dimensions";
  bool constant = getKind() == HwBufferKind::constant;
  if (constant != getValue().has_value())
    return emitOpError("constant buffers, and only they, carry a value");
  if (constant) {
    auto valueType = cast<ShapedType>(getValue()->getType());
    if (valueType.getShape() != type.getShape() ||
        valueType.getElementType() != type.getElementType())
      return emitOpError("value does not match the buffer type");
  }
  return success();
}

LogicalResult HwCoreOp::verify() {
  auto program = cast<HwProgramOp>((*this)->getParentOp());
  if (getCore() < 0 || getCore() >= program.getNumCores())
    return emitOpError() << "core " << getCore() << " is outside the program's "
                         << program.getNumCores() << " cores";
  return success();
}

LogicalResult HwLoopOp::verify() {
  if (getTrips() < 0)
    return emitOpError("trip count must not be negative");
  int depth = 0;
  for (Operation *p = *this; p; p = p->getParentOp())
    depth += isa<HwLoopOp>(p);
  if (depth > ISA::kMaxLoopDepth)
    return emitOpError() << "hardware loops nest at most " << ISA::kMaxLoopDepth << " deep";
  if (!(*this)->getParentOfType<HwCoreOp>())
    return emitOpError("must be inside a spyre.hw.core");
  return success();
}

//===----------------------------------------------------------------------===//
// Engine instructions
//===----------------------------------------------------------------------===//

namespace {
/// Checks what every engine instruction shares: its place, its semaphores,
/// and that buffer references name buffers of the program.
template <typename OpTy>
LogicalResult verifyEngineOp(OpTy op, ArrayRef<std::pair<StringRef, RefAttr>> refs,
                             bool lxOnly) {
  auto core = op->template getParentOfType<HwCoreOp>();
  if (!core)
    return op.emitOpError("must be inside a spyre.hw.core");
  for (std::optional<int64_t> sem : {op.getWaitSem(), op.getSignalSem()})
    if (sem && (*sem < 0 || *sem >= ISA::kNumSems))
      return op.emitOpError() << "semaphore " << *sem << " is outside 0.." << ISA::kNumSems - 1;
  if (op.getWaitInc() && op.getWaitInc()->size() > 3)
    return op.emitOpError("wait_inc has at most three entries");
  auto program = op->template getParentOfType<HwProgramOp>();
  for (auto [name, ref] : refs) {
    if (!ref)
      continue;
    if (lxOnly && !ref.isLx())
      return op.emitOpError() << name << " must be in LX";
    if (ref.isLx())
      continue;
    if (!SymbolTable::lookupSymbolIn(program, ref.getBuffer()))
      return op.emitOpError() << name << " refers to unknown buffer " << ref.getBuffer();
  }
  return success();
}

template <size_t N>
LogicalResult verifyFunc(Operation *op, StringRef func, const std::array<const char *, N> &names) {
  if (ISA::indexOfName(names, func) >= 0)
    return success();
  return op->emitOpError() << "unknown function '" << func << "'";
}
} // namespace

LogicalResult HwDmaOp::verify() {
  if (getCounts().size() != 3)
    return emitOpError("counts has three entries (innermost first)");
  return verifyEngineOp(*this, {{"dst", getDst()}, {"src", getSrc()}}, false);
}

LogicalResult HwRingOp::verify() {
  if (getCounts().size() != 3)
    return emitOpError("counts has three entries (innermost first)");
  return verifyEngineOp(*this, {{"dst", getDst()}, {"src", getSrc()}}, /*lxOnly=*/true);
}

LogicalResult HwGatherOp::verify() {
  if (getIndices().getDtype() != static_cast<uint8_t>(ISA::DType::i32) || !getIndices().isLx())
    return emitOpError("indices are i32 in LX");
  return verifyEngineOp(*this, {{"dst", getDst()}, {"table", getTable()}}, false);
}

LogicalResult HwScatterOp::verify() {
  if (getIndices().getDtype() != static_cast<uint8_t>(ISA::DType::i32) || !getIndices().isLx())
    return emitOpError("indices are i32 in LX");
  return verifyEngineOp(*this, {{"table", getTable()}, {"src", getSrc()}}, false);
}

LogicalResult HwMatmulOp::verify() {
  return verifyEngineOp(*this, {{"c", getC()}, {"a", getA()}, {"b", getB()}}, true);
}

LogicalResult HwUnaryOp::verify() {
  if (failed(verifyFunc(*this, getFunc(), ISA::kUnaryFuncNames)))
    return failure();
  return verifyEngineOp(*this, {{"dst", getDst()}, {"src", getSrc()}}, true);
}

LogicalResult HwBinaryOp::verify() {
  if (failed(verifyFunc(*this, getFunc(), ISA::kBinaryFuncNames)))
    return failure();
  if (getRhs().has_value() == getImm().has_value())
    return emitOpError("takes either a second operand or an immediate");
  return verifyEngineOp(*this,
                        {{"dst", getDst()}, {"lhs", getLhs()}, {"rhs", getRhs().value_or(RefAttr())}},
                        true);
}

LogicalResult HwSelectOp::verify() {
  return verifyEngineOp(
      *this, {{"dst", getDst()}, {"cond", getCond()}, {"lhs", getLhs()}, {"rhs", getRhs()}}, true);
}

LogicalResult HwFillOp::verify() {
  return verifyEngineOp(*this, {{"dst", getDst()}}, true);
}

LogicalResult HwReduceOp::verify() {
  if (failed(verifyFunc(*this, getFunc(), ISA::kReduceFuncNames)))
    return failure();
  if (getFunc() == "welford" && (!getAux1() || !getAux2()))
    return emitOpError("welford writes M2 to aux1 and the count to aux2");
  return verifyEngineOp(*this,
                        {{"dst", getDst()}, {"src", getSrc()},
                         {"aux1", getAux1().value_or(RefAttr())},
                         {"aux2", getAux2().value_or(RefAttr())}},
                        true);
}
