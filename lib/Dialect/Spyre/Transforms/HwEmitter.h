//===- HwEmitter.h - writing per-core hardware-level streams ----*- C++ -*-===//
//
// What every op's lowering shares: the program's buffers, one builder per
// core stream, the semaphores, and the double-buffered tile pipeline.
//
// A core runs an op as a sequence of steps; each step loads tiles (DMA),
// computes on them (PT / SFU, or the DMA engine for gathers) and may store
// results (DMA). Input tiles of step t live in copy t % 2 of their slots,
// so loads of step t + 2 overlap the compute of step t + 1. The stream is
//   L0 L1 C0 S0 L2 C1 S1 L3 ...
// (a step's prefetches, loads for a later step, right after its loads).
// and every wait is on an instruction earlier in the stream, which keeps the
// in-order engines and bounded queues of docs/isa.md free of deadlock:
//   - the first compute instruction of step t waits for the loads of step t
//     (or, in a step without loads, for the stores of step t - 2);
//   - stores of step t wait for the compute of step t;
//   - loads of step t + 2 wait for the compute of step t, whose slots they
//     overwrite.
// A step may name the instruction that is the last to read its operand
// slots (StepCompute::releasesOperands: a matmul before its epilogue); the
// loads of step t + 2 into those slots (the first `operandLoads` of its
// loads) then wait for that instruction only and go ahead of step t's
// stores in the DMA queue, so that a long SFU tail does not hold up the
// next operands:
//   ... C0 Lop2 S0 L2 C1 Lop3 S1 L3 ...
// and the first compute instruction of step t + 2 waits for step t's
// stores (which follow its operand loads) where step t has any. A step may
// also name a waiter for its loads after the operand loads
// (StepCompute::waitsForLateLoads: a matmul epilogue's bias or residual):
// its first instruction then waits for the operands (and step t - 2's
// stores) only, the waiter, on the SFU after the releaser, for the rest
// (with explicit dependencies, below: any instruction but the first).
// Inside a step, consecutive compute instructions on different engines are
// chained through a semaphore; on one engine they are ordered already. A
// step may instead name each instruction's dependency (StepCompute::add
// with `after`, an instruction of this step or an earlier one): every PT
// and SFU instruction of such a step but its last signals its engine's
// semaphore, which only that engine's instructions signal, so the count an
// instruction brings it to names that instruction, and independent work
// overlaps.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_TRANSFORMS_HWEMITTER_H
#define SPYRE_TRANSFORMS_HWEMITTER_H

#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"

#include <array>
#include <functional>

namespace mlir::spyre {

/// One strided DMA transfer (docs/isa.md, opcode dma).
struct Transfer {
  RefAttr dst, src;
  int64_t rowBytes = 0;
  std::array<int64_t, 3> counts = {1, 1, 1};
};

/// A copy from this core's LX (`src`) into core `dstCore`'s LX (`dst`) over
/// the ring (docs/isa.md, opcode ring), which signals the destination.
struct RingSend {
  int64_t dstCore;
  RefAttr dst, src;
  int64_t rowBytes = 0;
  std::array<int64_t, 3> counts = {1, 1, 1};
};

/// The instructions of one step's compute, chained across engines.
class StepCompute {
public:
  StepCompute(OpBuilder &builder, Location loc) : builder(builder), loc(loc) {}
  OpBuilder &b() { return builder; }
  Location getLoc() const { return loc; }
  /// Adds an engine instruction built with `builder` (already inserted).
  /// By default it waits for the instruction added before it when that one
  /// runs on another engine (a chain). With `after`, the step's
  /// dependencies are explicit instead: the instruction waits for `after`
  /// only (nullptr: for nothing but the engine's earlier instructions), so
  /// that the PT and the SFU work on different tiles at once. A step uses
  /// one style or the other.
  Operation *add(Operation *op);
  Operation *add(Operation *op, Operation *after);
  /// Explicit style: `op` (added, with no `after`) works on the next step's
  /// inputs and waits for that step's loads instead: a step may start the
  /// next one's work, which a later step then names as its `after`.
  void waitsForNextLoads(Operation *op) { nextLoadsWaiter = op; }
  /// `op` (added, on the PT) is the last instruction of this step to read
  /// the slots of the step's operand loads (TileStep::operandLoads).
  void releasesOperands(Operation *op) { releaser = op; }
  Operation *getReleaser() const { return releaser; }
  /// `op` (added right after the releaser, on the SFU, and not the step's
  /// last) waits for the step's loads after its operand loads (a matmul
  /// epilogue's bias or residual), which the instructions after it read:
  /// the step's first instruction then waits for its operand loads only,
  /// and the instruction after `op` for the releaser. Explicit style: `op`
  /// (not the first, with no dependency on another engine) waits for all of
  /// the step's loads, which the instructions naming it need (attention
  /// scales its query panel while the keys and values arrive).
  void waitsForLateLoads(Operation *op) { lateLoadsWaiter = op; }
  Operation *getLateLoadsWaiter() const { return lateLoadsWaiter; }
  ArrayRef<Operation *> ops() const { return emitted; }
  /// The instruction each one waits for (explicit style), else empty.
  ArrayRef<Operation *> dependencies() const { return after; }
  Operation *getNextLoadsWaiter() const { return nextLoadsWaiter; }
  /// Explicit style: store `index` of the step waits for `op` (added, on
  /// the PT or the SFU) instead of the step's last instruction, so that a
  /// result finished early goes out while the step computes the rest.
  void storeAfter(size_t index, Operation *op) {
    if (storeWaiters.size() <= index)
      storeWaiters.resize(index + 1, nullptr);
    storeWaiters[index] = op;
  }
  ArrayRef<Operation *> getStoreWaiters() const { return storeWaiters; }

private:
  OpBuilder &builder;
  Location loc;
  SmallVector<Operation *> emitted, after, storeWaiters;
  Operation *nextLoadsWaiter = nullptr, *releaser = nullptr, *lateLoadsWaiter = nullptr;
};

/// The two LX copies of an input slot: the panel each holds and the step
/// that last used it. A panel not held goes to the copy used longer ago,
/// which the step before did not use, so the pipeline's rule (the loads of
/// step t wait for the compute of step t - 2) keeps it from being
/// overwritten while in use.
struct SlotCopies {
  using Key = std::array<int64_t, 3>;
  std::array<Key, 2> held = {Key{-1, -1, -1}, Key{-1, -1, -1}};
  std::array<int64_t, 2> lastUse = {-1, -1};
  /// The copy holding `panel` for step `t`, and whether it must be loaded.
  std::pair<int64_t, bool> use(Key panel, int64_t t) {
    for (int64_t c = 0; c < 2; ++c)
      if (held[c] == panel) {
        lastUse[c] = t;
        return {c, false};
      }
    int64_t c = lastUse[0] <= lastUse[1] ? 0 : 1;
    held[c] = panel;
    lastUse[c] = t;
    return {c, true};
  }
};

/// What a step does; `compute` must emit at least one instruction.
struct TileStep {
  SmallVector<Transfer> loads, stores;
  /// Loads for a later step, issued after this step's loads (into slots
  /// that the compute of step t - 2 was the last to read): this step's
  /// compute does not wait for them; the later steps do, as loads complete
  /// in order. They take a load off the step that needs it, where it would
  /// hold up the compute (attention's next query panel).
  SmallVector<Transfer> prefetches;
  /// How many of `loads`, from the first, fill slots that only the
  /// releasing instruction of a step reads (see the file comment); with a
  /// late-loads waiter, the ones the step's first instruction waits for.
  size_t operandLoads = 0;
  /// Whether the compute may write a slot that the stores of step t - 2
  /// read, so that it waits for them. A plan whose steps keep their results
  /// apart (a matmul's accumulator copies by tile) clears it where they do
  /// not meet, and the step waits for its loads only.
  bool mayOverwriteStored = true;
  std::function<void(StepCompute &)> compute;
};

class HwEmitter {
public:
  /// Emits into `program` (empty), whose device buffers stand for the
  /// kernel's values as given by `symbolOf` / `byteOffsetOf`.
  HwEmitter(HwProgramOp program, const ::spyre::Arch &arch, int64_t numCores,
            DenseMap<Value, std::pair<FlatSymbolRefAttr, int64_t>> deviceBuffers);

  MLIRContext *getContext() { return program.getContext(); }
  int64_t getNumCores() const { return numCores; }
  const ::spyre::Arch &getArch() const { return arch; }

  /// A device operand: byte `offset` into the buffer holding `buffer`.
  RefAttr device(Value buffer, uint8_t dtype, int64_t offset,
                 std::array<int64_t, 3> strides = {0, 0, 0});
  RefAttr lx(uint8_t dtype, int64_t offset, std::array<int64_t, 3> strides = {0, 0, 0});

  /// Runs `numSteps` steps on `core`, `stepAt(i)` describing step i, with the
  /// pipeline of the file comment.
  void pipeline(int64_t core, Location loc, int64_t numSteps,
                function_ref<TileStep(int64_t)> stepAt);

  /// Marks the start of kernel-level op number `id` (counters) on every core.
  void beginOp(int64_t id);
  /// Every core finishes its work and meets the others.
  void barrier();

  /// Ring transfers signalled to `core` so far. A core waiting for
  /// transfers other cores send it counts from here: read it for every
  /// core before any of them emits its sends.
  int64_t ringReceived(int64_t core) const { return cores[core].signalled[kRing]; }
  /// One step of `core` that exchanges partial results with other cores
  /// (after a barrier, so that every core's earlier work is done): it sends
  /// `sends`, loads `loads`, and runs `compute` (chained as in a pipeline
  /// step) once `ringReceived(core)` has reached `receivedThrough` and its
  /// loads are in: the first instruction waits for the transfers (or the
  /// loads when it receives none), the one `compute` names with
  /// waitsForLateLoads for the loads. Then it stores `stores`. Without
  /// `compute` the core only sends.
  void exchange(int64_t core, Location loc, ArrayRef<RingSend> sends, ArrayRef<Transfer> loads,
                int64_t receivedThrough, function_ref<void(StepCompute &)> compute,
                ArrayRef<Transfer> stores);

  /// Checks what emitting found: the per-core span of the card (the bytes
  /// of one buffer a core touches lie within `memory.per_core_span_bytes`)
  /// and the instruction budget. Errors go to `op`.
  LogicalResult check(Operation *op);

  /// The most instructions a program may have, over all cores. A program
  /// beyond it (hundreds of MiB of binary) comes from sizes the card cannot
  /// run in any reasonable time; refusing it bounds the compile time. Every
  /// step emits at least one instruction, so a pipeline whose steps alone
  /// exceed the budget is refused before it emits anything.
  static constexpr int64_t kMaxInstructions = int64_t{1} << 21;

private:
  /// The semaphores, numbered from 0 in this order.
  /// kRing counts the ring transfers other cores sent this one.
  enum Sem : int64_t { kLoad, kCompute, kStore, kChain, kPtDone, kSfuDone, kRelease, kRing };
  struct Core {
    OpBuilder builder;
    std::array<int64_t, 8> signalled = {0, 0, 0, 0, 0, 0, 0, 0};
    /// First and last byte touched, per device buffer symbol.
    llvm::StringMap<std::pair<int64_t, int64_t>> touched;
    /// Explicit style: the semaphore count each instruction brought its
    /// engine's semaphore to.
    DenseMap<Operation *, std::pair<int64_t, int64_t>> reached;
  };

  Operation *dma(Core &core, Location loc, const Transfer &t);
  void explicitDependencies(Core &core, ArrayRef<Operation *> ops,
                            ArrayRef<Operation *> after);
  void sync(Operation *op, int64_t waitSem, int64_t waitCount);
  void signal(Core &core, Operation *op, Sem sem);

  HwProgramOp program;
  ::spyre::Arch arch;
  int64_t numCores;
  DenseMap<Value, std::pair<FlatSymbolRefAttr, int64_t>> deviceBuffers;
  SmallVector<Core> cores;
  /// Instructions emitted so far; set once a limit is exceeded, which stops
  /// all further emitting (the program is refused by check()).
  int64_t instructions = 0;
  bool overSpan = false, overBudget = false;
};

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_HWEMITTER_H
