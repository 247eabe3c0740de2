//===- HwEmitter.cpp - writing per-core hardware-level streams ------------===//

#include "HwEmitter.h"

using namespace mlir;
using namespace mlir::spyre;

namespace {

enum class Engine { dma, pt, sfu };

Engine engineOf(Operation *op) {
  if (isa<HwDmaOp, HwRingOp, HwGatherOp, HwScatterOp>(op))
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

/// `t` with rows that continue one another on both sides moved as one
/// longer row: the card moves each row's sticks, so a tile of 64-byte rows
/// (a product's lhs with K = 32) moved row by row paid for sticks it moved
/// as a run (SegFormer's query projection of 3136 x 32: 18.1 -> 6.6 us).
static Transfer coalesced(Transfer t) {
  auto shifted = [](RefAttr ref) {
    SmallVector<int64_t, 3> strides(ref.getStrides());
    strides.resize(3, 0);
    SmallVector<int64_t, 3> next = {strides[1], strides[2], 0};
    return RefAttr::get(ref.getContext(), ref.getBuffer(), ref.getDtype(), ref.getOffset(), next,
                        ref.getInc(), ref.getCore());
  };
  auto firstStride = [](RefAttr ref) {
    return ref.getStrides().empty() ? int64_t(0) : ref.getStrides()[0];
  };
  while (t.counts[0] > 1 && firstStride(t.src) == t.rowBytes &&
         firstStride(t.dst) == t.rowBytes) {
    t.rowBytes *= t.counts[0];
    t.counts = {t.counts[1], t.counts[2], 1};
    t.src = shifted(t.src);
    t.dst = shifted(t.dst);
  }
  return t;
}

Operation *HwEmitter::dma(Core &core, Location loc, const Transfer &given) {
  const Transfer t = coalesced(given);
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
  // Per step, the count its operand loads (the first `operandLoads`) reach.
  SmallVector<int64_t> operandsThrough;
  // Per step, how many of its loads went ahead of the stores of step t - 2.
  SmallVector<size_t> loadsAhead;
  SmallVector<TileStep> steps;
  // Loads [from, to) of `step`, the first waiting for `wait` (a semaphore
  // and its count) when given.
  auto issue = [&](const TileStep &step, size_t from, size_t to,
                   std::optional<std::pair<int64_t, int64_t>> wait) {
    for (size_t i = from; i < to; ++i) {
      Operation *op = dma(core, loc, step.loads[i]);
      if (i == from && wait)
        sync(op, wait->first, wait->second);
      signal(core, op, kLoad);
    }
  };
  // A step's prefetches follow its loads in the DMA queue (the first one
  // waiting for `wait` when the step issued no load after it), outside the
  // count its compute waits for.
  auto prefetch = [&](const TileStep &step, bool issuedLoads,
                      std::optional<std::pair<int64_t, int64_t>> wait) {
    for (auto [i, transfer] : llvm::enumerate(step.prefetches)) {
      Operation *op = dma(core, loc, transfer);
      if (i == 0 && !issuedLoads && wait)
        sync(op, wait->first, wait->second);
      signal(core, op, kLoad);
    }
  };
  for (int64_t t = 0; t < std::min<int64_t>(2, numSteps); ++t) {
    steps.push_back(stepAt(t));
    operandsThrough.push_back(core.signalled[kLoad] - loadBase +
                              int64_t(steps.back().operandLoads));
    issue(steps.back(), 0, steps.back().loads.size(), std::nullopt);
    loadsThrough.push_back(core.signalled[kLoad] - loadBase);
    prefetch(steps.back(), true, std::nullopt);
    loadsAhead.push_back(0);
  }
  for (int64_t t = 0; t < numSteps; ++t) {
    if (overSpan || overBudget)
      return;
    TileStep &step = steps[t];
    assert(step.operandLoads <= step.loads.size() && "more operand loads than loads");
    StepCompute compute(core.builder, loc);
    step.compute(compute);
    ArrayRef<Operation *> ops = compute.ops();
    assert(!ops.empty() && "a step computes nothing");
    // Every step starts after its loads and after the stores of step t - 2
    // (its slots may be the ones those read; not when the plan says they
    // are not, `mayOverwriteStored`): for t >= 2 the DMA queue
    // holds the loads of step t that went ahead, then step t - 2's stores,
    // then step t's other loads, so the last of those that exists implies
    // the rest.
    bool storesBefore = step.mayOverwriteStored && t >= 2 &&
                        storesThrough[t - 2] > (t >= 3 ? storesThrough[t - 3] : 0);
    Operation *late = step.loads.size() > step.operandLoads ? compute.getLateLoadsWaiter()
                                                             : nullptr;
    if (late) {
      // The operand loads went ahead of step t - 2's stores, whose slots
      // this step may overwrite, or follow them in the DMA queue: wait for
      // the later of the two.
      bool ahead = loadsAhead[t] >= step.operandLoads;
      if (ahead && storesBefore)
        sync(ops.front(), kStore, storeBase + storesThrough[t - 2]);
      else
        sync(ops.front(), kLoad, loadBase + operandsThrough[t]);
    } else if (step.loads.size() > loadsAhead[t] || (!step.loads.empty() && !storesBefore)) {
      sync(ops.front(), kLoad, loadBase + loadsThrough[t]);
    } else if (int64_t follows = t < 2                     ? 0
                                 : step.mayOverwriteStored ? storesThrough[t - 2]
                                 : t >= 3                  ? storesThrough[t - 3]
                                                           : 0) {
      // Without loads of its own to wait for, which would imply them, the
      // step still follows the stores before step t - 2's: its slots were
      // last stored from there.
      sync(ops.front(), kStore, storeBase + follows);
    }
    Operation *releaser = compute.getReleaser();
    if (releaser == ops.back()) // its completion is the step's
      releaser = nullptr;
    assert((!releaser || engineOf(releaser) == Engine::pt) &&
           "releases count in order only on one engine");
    assert((!late || !compute.dependencies().empty() ||
            (releaser && late != ops.back() && engineOf(late) == Engine::sfu)) &&
           "the late loads' waiter follows the releaser on the SFU");
    if (compute.dependencies().empty()) {
      for (size_t i = 1; i < ops.size(); ++i) {
        if (ops[i] == late) {
          sync(ops[i], kLoad, loadBase + loadsThrough[t]);
          continue;
        }
        // The instruction after the waiter waits for the one before it.
        Operation *before = ops[i - 1] == late ? ops[i - 2] : ops[i - 1];
        if (engineOf(ops[i]) == engineOf(before) && before == ops[i - 1])
          continue;
        Sem sem = before == releaser ? kRelease : kChain;
        signal(core, before, sem);
        sync(ops[i], sem, core.signalled[sem]);
      }
      if (releaser && !releaser->hasAttr("signal_sem"))
        signal(core, releaser, kRelease);
    } else {
      assert(!releaser && "a step with explicit dependencies names no releaser");
      explicitDependencies(core, ops, compute.dependencies());
      if (late) {
        size_t at = llvm::find(ops, late) - ops.begin();
        assert(at > 0 && at < ops.size() &&
               (!compute.dependencies()[at] ||
                engineOf(compute.dependencies()[at]) == engineOf(late)) &&
               "the late loads' waiter, not the first, waits for nothing else");
        (void)at;
        sync(late, kLoad, loadBase + loadsThrough[t]);
      }
      if (Operation *early = compute.getNextLoadsWaiter()) {
        assert(t + 1 < numSteps && "no next step to start");
        sync(early, kLoad, loadBase + loadsThrough[t + 1]);
      }
    }
    signal(core, ops.back(), kCompute);
    std::pair<int64_t, int64_t> done = {kCompute, computeBase + t + 1};
    // Step t + 2 joins `steps` after step t's stores are emitted, so that
    // `step` stays valid until then.
    std::optional<TileStep> next;
    if (t + 2 < numSteps) {
      next = stepAt(t + 2);
      // Without a releaser they would wait for what the stores wait for:
      // the stores go first, as they hold the oldest results.
      loadsAhead.push_back(releaser ? next->operandLoads : 0);
      std::pair<int64_t, int64_t> released = {kRelease, core.signalled[kRelease]};
      issue(*next, 0, loadsAhead.back(), released);
      operandsThrough.push_back(core.signalled[kLoad] - loadBase +
                                int64_t(next->operandLoads - loadsAhead.back()));
    }
    // A store waits for the step's completion, or for the instruction the
    // step names; stores run in order, so one after a store that waited for
    // the completion waits for nothing more.
    ArrayRef<Operation *> storeWaiters = compute.getStoreWaiters();
    bool afterDone = false;
    for (auto [i, transfer] : llvm::enumerate(step.stores)) {
      Operation *op = dma(core, loc, transfer);
      Operation *waiter = i < storeWaiters.size() ? storeWaiters[i] : nullptr;
      if (waiter && waiter != ops.back()) {
        auto it = core.reached.find(waiter);
        assert(it != core.reached.end() && "a store waits for an instruction of its step");
        sync(op, it->second.first, it->second.second);
      } else if (!afterDone) {
        sync(op, done.first, done.second);
        afterDone = true;
      }
      signal(core, op, kStore);
    }
    storesThrough.push_back(core.signalled[kStore] - storeBase);
    instructions +=
        int64_t(ops.size() + step.stores.size() + step.loads.size() + step.prefetches.size());
    overBudget |= instructions > kMaxInstructions;
    if (next) {
      issue(*next, loadsAhead.back(), next->loads.size(), done);
      loadsThrough.push_back(core.signalled[kLoad] - loadBase);
      prefetch(*next, next->loads.size() > loadsAhead.back(), done);
      steps.push_back(std::move(*next));
    }
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

void HwEmitter::exchange(int64_t coreIndex, Location loc, ArrayRef<RingSend> sends,
                         ArrayRef<Transfer> loads, int64_t receivedThrough,
                         function_ref<void(StepCompute &)> compute,
                         ArrayRef<Transfer> stores) {
  if (overSpan || overBudget)
    return;
  Core &core = cores[coreIndex];
  for (const RingSend &send : sends) {
    RefAttr dst = RefAttr::get(getContext(), FlatSymbolRefAttr(), send.dst.getDtype(),
                               send.dst.getOffset(), send.dst.getStrides(), {0, 0, 0},
                               send.dstCore);
    Operation *op = HwRingOp::create(core.builder, loc, dst, send.src, send.rowBytes,
                                     send.counts, /*signal_remote=*/true, nullptr, 0, nullptr,
                                     nullptr);
    op->setAttr("signal_sem", Builder(getContext()).getI64IntegerAttr(kRing));
    ++cores[send.dstCore].signalled[kRing];
  }
  for (const Transfer &t : loads)
    signal(core, dma(core, loc, t), kLoad);
  instructions += int64_t(sends.size() + loads.size());
  if (!compute) {
    assert(loads.empty() && stores.empty() && "a core that computes nothing loads nothing");
    return;
  }
  const int64_t loadsThrough = core.signalled[kLoad];
  StepCompute sc(core.builder, loc);
  compute(sc);
  ArrayRef<Operation *> ops = sc.ops();
  assert(!ops.empty() && sc.dependencies().empty() && "an exchange computes, chained");
  Operation *late = sc.getLateLoadsWaiter();
  assert((loads.empty() || receivedThrough == 0 || late) &&
         "with transfers to wait for, an instruction waits for the loads");
  if (receivedThrough > 0)
    sync(ops.front(), kRing, receivedThrough);
  else if (!loads.empty())
    sync(ops.front(), kLoad, loadsThrough);
  for (size_t i = 1; i < ops.size(); ++i) {
    if (ops[i] == late) {
      assert(engineOf(late) == engineOf(ops[i - 1]) && "the loads' waiter follows its engine");
      sync(late, kLoad, loadsThrough);
      continue;
    }
    if (engineOf(ops[i]) == engineOf(ops[i - 1]))
      continue;
    signal(core, ops[i - 1], kChain);
    sync(ops[i], kChain, core.signalled[kChain]);
  }
  signal(core, ops.back(), kCompute);
  const int64_t done = core.signalled[kCompute];
  for (auto [i, t] : llvm::enumerate(stores)) {
    Operation *op = dma(core, loc, t);
    if (i == 0)
      sync(op, kCompute, done);
    signal(core, op, kStore);
  }
  instructions += int64_t(ops.size() + stores.size());
  overBudget |= instructions > kMaxInstructions;
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
