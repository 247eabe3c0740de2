//===- HwEmitter.cpp - writing per-core hardware-level streams ------------===//

#include "HwEmitter.h"

using namespace mlir;
using namespace mlir::spyre;

namespace {

enum class Engine { dma, pt, sfu };

Engine engineOf(Operation *op) {
  if (isa<HwDmaOp, HwRingOp, HwGatherOp>(op))
    return Engine::dma;
  return isa<HwMatmulOp>(op) ? Engine::pt : Engine::sfu;
}

} // namespace

Operation *StepCompute::add(Operation *op) {
  assert(after.empty() && "a step mixes chained and explicit dependencies");
  emitted.push_back(op);
  return op;
}

Operation *StepCompute::add(Operation *op, Operation *dependency) {
  assert(after.size() == emitted.size() && "a step mixes chained and explicit dependencies");
  emitted.push_back(op);
  after.push_back(dependency);
  return op;
}

HwEmitter::HwEmitter(HwProgramOp program, const ::spyre::Arch &arch, int64_t numCores,
                     DenseMap<Value, std::pair<FlatSymbolRefAttr, int64_t>> deviceBuffers)
    : program(program), arch(arch), numCores(numCores), deviceBuffers(std::move(deviceBuffers)) {
  OpBuilder b = OpBuilder::atBlockEnd(&program.getBody().front());
  for (int64_t c = 0; c < numCores; ++c) {
    auto core = HwCoreOp::create(b, program.getLoc(), c);
    Block *body = b.createBlock(&core.getBody());
    b.setInsertionPointAfter(core);
    cores.push_back(Core{OpBuilder::atBlockEnd(body), {}, {}});
  }
}

RefAttr HwEmitter::device(Value buffer, uint8_t dtype, int64_t offset,
                          std::array<int64_t, 3> strides) {
  auto [symbol, base] = deviceBuffers.lookup(buffer);
  assert(symbol && "a buffer without device memory");
  return RefAttr::get(getContext(), symbol, dtype, base + offset, strides, {0, 0, 0}, 0);
}

RefAttr HwEmitter::lx(uint8_t dtype, int64_t offset, std::array<int64_t, 3> strides) {
  return RefAttr::get(getContext(), FlatSymbolRefAttr(), dtype, offset, strides, {0, 0, 0}, 0);
}

void HwEmitter::sync(Operation *op, int64_t waitSem, int64_t waitCount) {
  Builder b(op->getContext());
  op->setAttr("wait_sem", b.getI64IntegerAttr(waitSem));
  op->setAttr("wait_count", b.getI64IntegerAttr(waitCount));
}

void HwEmitter::signal(Core &core, Operation *op, Sem sem) {
  op->setAttr("signal_sem", Builder(op->getContext()).getI64IntegerAttr(sem));
  ++core.signalled[sem];
}

Operation *HwEmitter::dma(Core &core, Location loc, const Transfer &t) {
  // Record the device bytes each side can touch, for the span check.
  for (RefAttr ref : {t.dst, t.src}) {
    if (ref.isLx())
      continue;
    int64_t lo = ref.getOffset(), hi = ref.getOffset() + t.rowBytes;
    for (int i = 0; i < 3; ++i) {
      int64_t reach = (t.counts[i] - 1) * ref.getStrides()[i];
      (reach < 0 ? lo : hi) += reach;
    }
    auto [it, inserted] = core.touched.try_emplace(ref.getBuffer().getValue(), lo, hi);
    if (!inserted)
      it->second = {std::min(it->second.first, lo), std::max(it->second.second, hi)};
    // Stop at the first step beyond the span, not after emitting a program
    // of billions of bytes that is refused anyway.
    overSpan |= it->second.second - it->second.first > arch.perCoreSpanBytes;
  }
  return HwDmaOp::create(core.builder, loc, t.dst, t.src, t.rowBytes, t.counts, nullptr, 0,
                         nullptr, nullptr);
}

void HwEmitter::pipeline(int64_t coreIndex, Location loc, int64_t numSteps,
                         function_ref<TileStep(int64_t)> stepAt) {
  if (overSpan || overBudget)
    return;
  if (numSteps > kMaxInstructions - instructions) {
    overBudget = true;
    return;
  }
  Core &core = cores[coreIndex];
  const int64_t loadBase = core.signalled[kLoad], computeBase = core.signalled[kCompute],
                storeBase = core.signalled[kStore];
  SmallVector<int64_t> loadsThrough, storesThrough; // cumulative counts per step
  SmallVector<TileStep> steps;
  auto issueLoads = [&](int64_t t) {
    steps.push_back(stepAt(t));
    for (auto [i, transfer] : llvm::enumerate(steps.back().loads)) {
      Operation *op = dma(core, loc, transfer);
      if (i == 0 && t >= 2)
        sync(op, kCompute, computeBase + t - 1);
      signal(core, op, kLoad);
    }
    loadsThrough.push_back(core.signalled[kLoad] - loadBase);
  };
  for (int64_t t = 0; t < std::min<int64_t>(2, numSteps); ++t)
    issueLoads(t);
  for (int64_t t = 0; t < numSteps; ++t) {
    if (overSpan || overBudget)
      return;
    TileStep &step = steps[t];
    StepCompute compute(core.builder, loc);
    step.compute(compute);
    ArrayRef<Operation *> ops = compute.ops();
    assert(!ops.empty() && "a step computes nothing");
    if (!step.loads.empty())
      sync(ops.front(), kLoad, loadBase + loadsThrough[t]);
    else if (t >= 2 && storesThrough[t - 2] > 0)
      sync(ops.front(), kStore, storeBase + storesThrough[t - 2]);
    if (compute.dependencies().empty()) {
      for (size_t i = 1; i < ops.size(); ++i) {
        if (engineOf(ops[i]) == engineOf(ops[i - 1]))
          continue;
        signal(core, ops[i - 1], kChain);
        sync(ops[i], kChain, core.signalled[kChain]);
      }
    } else {
      explicitDependencies(core, ops, compute.dependencies());
      if (Operation *early = compute.getNextLoadsWaiter()) {
        assert(t + 1 < numSteps && "no next step to start");
        sync(early, kLoad, loadBase + loadsThrough[t + 1]);
      }
    }
    signal(core, ops.back(), kCompute);
    for (auto [i, transfer] : llvm::enumerate(step.stores)) {
      Operation *op = dma(core, loc, transfer);
      if (i == 0)
        sync(op, kCompute, computeBase + t + 1);
      signal(core, op, kStore);
    }
    storesThrough.push_back(core.signalled[kStore] - storeBase);
    instructions += int64_t(ops.size() + step.stores.size() + step.loads.size());
    overBudget |= instructions > kMaxInstructions;
    if (t + 2 < numSteps)
      issueLoads(t + 2);
    // Steps before t - 1 are no longer needed: keep memory flat on long runs.
    if (t >= 1)
      steps[t - 1] = TileStep();
  }
}

void HwEmitter::explicitDependencies(Core &core, ArrayRef<Operation *> ops,
                                     ArrayRef<Operation *> after) {
  assert((!after.front() || engineOf(after.front()) == engineOf(ops.front())) &&
         "the first instruction waits for the step's loads");
  // Stream order is each engine's order, so counting each engine's
  // instructions as they are emitted gives the count each one reaches.
  for (Operation *op : ops.drop_back()) { // the last one signals kCompute
    Engine engine = engineOf(op);
    assert(engine != Engine::dma && "a step's compute holds PT and SFU instructions");
    Sem sem = engine == Engine::pt ? kPtDone : kSfuDone;
    signal(core, op, sem);
    core.reached[op] = {sem, core.signalled[sem]};
  }
  for (auto [op, dependency] : llvm::zip_equal(ops, after)) {
    if (!dependency || engineOf(dependency) == engineOf(op))
      continue;
    auto it = core.reached.find(dependency);
    assert(it != core.reached.end() && "a dependency emitted earlier, not a step's last");
    sync(op, it->second.first, it->second.second);
  }
}

void HwEmitter::beginOp(int64_t id) {
  for (Core &core : cores)
    HwKernelOp::create(core.builder, program.getLoc(), id);
}

void HwEmitter::barrier() {
  for (Core &core : cores)
    HwBarrierOp::create(core.builder, program.getLoc());
}

LogicalResult HwEmitter::check(Operation *op) {
  if (overBudget)
    return op->emitError() << "the program would have more than " << kMaxInstructions
                           << " instructions; the sizes are beyond what the card runs in "
                              "reasonable time";
  for (auto [index, core] : llvm::enumerate(cores)) {
    SmallVector<StringRef> names(core.touched.keys());
    llvm::sort(names); // report in a stable order
    for (StringRef name : names) {
      auto [lo, hi] = core.touched.lookup(name);
      if (hi - lo > arch.perCoreSpanBytes)
        return op->emitError() << "core " << index << " would address " << hi - lo
                               << " bytes of buffer @" << name
                               << ", more than the per-core span of " << arch.perCoreSpanBytes
                               << " bytes; divide the work over more cores";
    }
  }
  return success();
}
