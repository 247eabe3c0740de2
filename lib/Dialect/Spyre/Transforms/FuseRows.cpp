//===- FuseRows.cpp - generics sharing row tiles in LX --------------------===//

#include "GenericLoops.h"
#include "GenericPlan.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "llvm/ADT/MapVector.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYREFUSEROWS
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {

int64_t bytesOf(Value buffer) {
  auto type = cast<BufferType>(buffer.getType());
  return type.getNumElements() * deviceDTypeBytes(deviceDType(type.getElementType()));
}

/// Generics of one kernel that could form a group, and what grouping saves.
struct Candidate {
  SmallVector<GenericOp> members;
  SmallVector<AllocOp> temporaries; ///< used by the members only
  int64_t savedBytes = 0;
};

struct FuseRows : mlir::spyre::impl::SpyreFuseRowsBase<FuseRows> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<::spyre::Arch> arch = getArch(getOperation());
    if (!arch)
      return signalPassFailure();
    getOperation().walk([&](KernelOp kernel) {
      Reshaped reshaped = takeReadersLoops(kernel);
      SmallVector<Candidate> found = candidates(kernel, *arch);
      // Ops that no candidate took get their loops back now; a candidate's
      // members get theirs back if its group does not form (fuse), as a
      // formed group may replace its members by copies.
      Reshaped members;
      for (auto &[op, old] : reshaped) {
        if (llvm::any_of(found, [&, op = op](const Candidate &c) {
              return llvm::is_contained(c.members, cast<GenericOp>(op));
            }))
          members.insert({op, old});
        else
          old.restore(cast<GenericOp>(op));
      }
      for (const Candidate &candidate : found)
        fuse(candidate, *arch, members);
    });
  }

  /// Generics given another's loops (takeReadersLoops), with their own.
  using Reshaped = llvm::MapVector<Operation *, GenericLoops>;

  /// Inductor iterates a contiguous elementwise op over its linear index. One
  /// whose result a later generic reads row-major over its own loops (T5's
  /// clamped residual sum, which both passes of the RMSNorm after it read)
  /// is rewritten to loop over the reader's, so that the two may group and
  /// the result stay in LX. Returns the rewritten ops with their former
  /// loops, put back where no group forms.
  static Reshaped takeReadersLoops(KernelOp kernel) {
    SmallVector<GenericOp> generics(kernel.getBody().front().getOps<GenericOp>());
    Reshaped reshaped;
    for (auto [i, op] : llvm::enumerate(generics)) {
      if (op.getStaticDomain().size() != 1 || op.getOutputs().size() != 1 ||
          !op.getReductionLoops().empty() || !op.getSymbols().empty())
        continue;
      Value result = op.getOutputs().front();
      for (GenericOp reader : ArrayRef(generics).drop_front(i + 1)) {
        auto input = llvm::find(reader.getInputs(), result);
        if (input == reader.getInputs().end())
          continue;
        ArrayRef<int64_t> loops = reader.getStaticDomain();
        AffineMap map = cast<AffineMapAttr>(
            reader.getIndexingMaps()[input - reader.getInputs().begin()]).getValue();
        if (loops.size() >= 2 && reader.getDomainSizes().empty() &&
            map == AffineMap::get(unsigned(loops.size()), 0,
                                  makeCanonicalStridedLayoutExpr(loops, op.getContext())))
          if (std::optional<GenericLoops> old = expandLeading(op, loops))
            reshaped.insert({op.getOperation(), *old});
        break;
      }
    }
    return reshaped;
  }

  /// A plan of `op` without diagnostics (nothing if the card cannot run it).
  static std::unique_ptr<GenericPlan>
  quietPlan(GenericOp op, const ::spyre::Arch &arch,
            GenericPlan::Role role = GenericPlan::Role::member, int groupCol = -1) {
    ScopedDiagnosticHandler silence(op.getContext(), [](Diagnostic &) { return success(); });
    auto plan = std::make_unique<GenericPlan>(op, arch, role, groupCol);
    if (failed(plan->analyze()))
      return nullptr;
    return plan;
  }

  /// Whether `op` runs better alone than any group's tiles let it: it
  /// writes between gaps (alone it moves runs over them, as a member one
  /// element at a time, each a stick), or alone it tiles a plane loop (rows
  /// of a few elements that continue each other: CodeGen's rotary
  /// embedding of [positions, heads, 16, 2] moved 67 MB as a member, 3 MB
  /// alone).
  static bool runsBestAlone(const GenericPlan &member) {
    return member.writesBetweenGaps() || member.tilesPlanesAlone();
  }

  SmallVector<Candidate> candidates(KernelOp kernel, const ::spyre::Arch &arch) {
    SmallVector<Operation *> ops;
    for (Operation &op : kernel.getBody().front())
      if (!isa<AllocOp, DeallocOp>(op))
        ops.push_back(&op);
    SmallVector<Candidate> result;
    Candidate current;
    std::unique_ptr<GenericPlan> firstPlan;
    // Generics that share no buffer with the group, passed over: grouped,
    // the members run before them. Where nothing joins after the first of
    // them, the scan goes back to it, so that it may start a group itself.
    SmallVector<GenericOp> passed;
    size_t firstPassed = 0;
    bool joinedAfterPassing = false;
    size_t i = 0;
    // Ends the group; returns whether the scan went back to a passed op.
    auto close = [&] {
      if (current.members.size() >= 2)
        result.push_back(current);
      bool back = !passed.empty() && !joinedAfterPassing;
      if (back)
        i = firstPassed;
      current = Candidate();
      firstPlan.reset();
      passed.clear();
      joinedAfterPassing = false;
      return back;
    };
    while (i < ops.size() || close()) {
      auto generic = dyn_cast<GenericOp>(ops[i]);
      // A candidate member is planned on the group's columns.
      auto planFor = [&](GenericOp op) {
        return quietPlan(op, arch, GenericPlan::Role::member,
                         current.members.empty() ? -1 : firstPlan->getColLoop());
      };
      std::unique_ptr<GenericPlan> plan = generic ? planFor(generic) : nullptr;
      bool alone = !plan || runsBestAlone(*plan);
      // A generic over the group's loops with its leading loops merged
      // (Inductor flattened them: [heads * rows, cols] after [heads, rows,
      // cols]) runs over the group's loops instead, when that lets it join.
      if (!alone && !current.members.empty() && plan->getSizes() != firstPlan->getSizes()) {
        std::optional<GenericLoops> old = expandLeading(generic, firstPlan->getSizes());
        if (!old)
          old = permuteTo(generic, firstPlan->getSizes());
        if (old) {
          std::unique_ptr<GenericPlan> expanded = planFor(generic);
          if (expanded && joins(current, generic, *expanded, *firstPlan) &&
              !conflictsWithAny(generic, passed))
            plan = std::move(expanded);
          else
            old->restore(generic);
        }
      }
      if (!current.members.empty() &&
          (alone || !joins(current, generic, *plan, *firstPlan) ||
           conflictsWithAny(generic, passed))) {
        // A copy of another tensor between a softmax's exponentials and
        // their sum (Bloom's value heads) would split the softmax, its f32
        // exponentials then written to device memory and read back.
        if (generic && passed.size() < kMaxPassed &&
            !conflictsWithAny(generic, current.members)) {
          if (passed.empty())
            firstPassed = i;
          passed.push_back(generic);
          ++i;
          continue;
        }
        if (close())
          continue;
        // It starts the next group: planned on its own columns.
        plan = generic ? planFor(generic) : nullptr;
        alone = !plan || runsBestAlone(*plan);
      }
      if (alone) {
        ++i;
        continue;
      }
      if (current.members.empty())
        firstPlan = std::move(plan);
      else if (!passed.empty())
        joinedAfterPassing = true;
      current.members.push_back(generic);
      ++i;
    }
    for (Candidate &c : result)
      account(kernel, c);
    return result;
  }

  /// Generics a group may pass over: a few, so that a kernel of many
  /// unrelated generics is not scanned again from each of them.
  static constexpr size_t kMaxPassed = 4;

  /// Whether `op` and one of `others` share a buffer that either writes (so
  /// that their order matters).
  static bool conflictsWithAny(GenericOp op, ArrayRef<GenericOp> others) {
    auto writes = [](GenericOp writer, Value buffer) {
      return llvm::is_contained(writer.getOutputs(), buffer);
    };
    for (GenericOp other : others)
      for (Value buffer : llvm::concat<Value>(op.getInputs(), op.getOutputs()))
        if (writes(other, buffer) ||
            (writes(op, buffer) && (llvm::is_contained(other.getInputs(), buffer) ||
                                    llvm::is_contained(other.getOutputs(), buffer))))
          return true;
    return false;
  }

  /// Rewrites `op` to loop over `target` when its domain is `target` with
  /// the leading loops merged into its first, parallel, loop (a row-major
  /// merge: the first loop's index is the merged loops' linear index);
  /// returns its former attributes, or nothing if it is not.
  static std::optional<GenericLoops> expandLeading(GenericOp op, ArrayRef<int64_t> target) {
    ArrayRef<int64_t> sizes = op.getStaticDomain();
    if (!op.getDomainSizes().empty() || sizes.empty() || target.size() <= sizes.size() ||
        llvm::is_contained(op.getReductionLoops(), 0u) ||
        !op.getBody().front().getOps<IndexExprOp>().empty())
      return std::nullopt;
    size_t lead = target.size() - sizes.size() + 1;
    int64_t merged = 1;
    for (int64_t size : target.take_front(lead))
      merged *= size;
    if (merged != sizes[0] || target.drop_front(lead) != sizes.drop_front())
      return std::nullopt;
    MLIRContext *context = op.getContext();
    SmallVector<AffineExpr> replacements;
    AffineExpr first = getAffineConstantExpr(0, context);
    for (size_t i = 0; i < lead; ++i)
      first = first * target[i] + getAffineDimExpr(unsigned(i), context);
    replacements.push_back(first);
    for (size_t j = 1; j < sizes.size(); ++j)
      replacements.push_back(getAffineDimExpr(unsigned(j + lead - 1), context));
    GenericLoops old = GenericLoops::of(op);
    SmallVector<Attribute> maps;
    for (Attribute attr : op.getIndexingMaps()) {
      AffineMap map = cast<AffineMapAttr>(attr).getValue();
      SmallVector<AffineExpr> symbols;
      for (unsigned i = 0; i < map.getNumSymbols(); ++i)
        symbols.push_back(getAffineSymbolExpr(i, context));
      maps.push_back(AffineMapAttr::get(simplifyAffineMap(map.replaceDimsAndSymbols(
          replacements, symbols, unsigned(target.size()), map.getNumSymbols()))));
    }
    SmallVector<Attribute> iterators(lead - 1, op.getIteratorTypes()[0]);
    llvm::append_range(iterators, op.getIteratorTypes());
    op.setStaticDomainAttr(DenseI64ArrayAttr::get(context, target));
    op.setIndexingMapsAttr(ArrayAttr::get(context, maps));
    op.setIteratorTypesAttr(ArrayAttr::get(context, iterators));
    return old;
  }

  /// Rewrites `op`, every loop parallel, to loop over `target` when its
  /// loops are those of `target` in another order (a transposing copy of a
  /// member's rows: [channels, positions] after [positions, channels]), each
  /// size matching one loop only; returns its former attributes, or
  /// nothing if it does not.
  static std::optional<GenericLoops> permuteTo(GenericOp op, ArrayRef<int64_t> target) {
    ArrayRef<int64_t> sizes = op.getStaticDomain();
    if (!op.getDomainSizes().empty() || sizes.size() != target.size() ||
        !op.getReductionLoops().empty() || !op.getSymbols().empty() ||
        !op.getBody().front().getOps<IndexExprOp>().empty())
      return std::nullopt;
    SmallVector<unsigned> order; // the loop of `sizes` each loop of `target` is
    for (int64_t size : target) {
      if (llvm::count(sizes, size) != 1 || llvm::count(target, size) != 1)
        return std::nullopt;
      order.push_back(unsigned(llvm::find(sizes, size) - sizes.begin()));
    }
    GenericLoops old = GenericLoops::of(op);
    op.permuteLoops(order);
    return old;
  }

  /// Whether `next` can run after the members on the same row tiles: same
  /// loops and tiling, connected (reads what a member wrote, from LX, or the
  /// same inputs), and not writing what a member reads or writes.
  static bool joins(const Candidate &group, GenericOp next, const GenericPlan &plan,
                    const GenericPlan &first) {
    if (plan.getSizes() != first.getSizes() || plan.getRowLoop() != first.getRowLoop() ||
        plan.getColLoop() != first.getColLoop())
      return false;
    bool connected = false;
    for (Value input : next.getInputs())
      for (GenericOp member : group.members) {
        if (llvm::is_contained(member.getOutputs(), input))
          connected = true;
        if (llvm::is_contained(member.getInputs(), input))
          connected = true;
      }
    for (Value output : next.getOutputs())
      for (GenericOp member : group.members)
        if (llvm::is_contained(member.getInputs(), output) ||
            llvm::is_contained(member.getOutputs(), output))
          return false;
    return connected;
  }

  /// The members' own temporaries and the traffic grouping saves: each
  /// temporary written and read back, each input read again.
  static void account(KernelOp kernel, Candidate &c) {
    auto inGroup = [&](Operation *op) {
      return isa<DeallocOp>(op) ||
             llvm::any_of(c.members, [&](GenericOp m) { return m.getOperation() == op; });
    };
    for (auto alloc : kernel.getBody().front().getOps<AllocOp>())
      if (!alloc->use_empty() && llvm::all_of(alloc->getUsers(), inGroup) &&
          llvm::any_of(c.members,
                       [&](GenericOp m) {
                         return llvm::is_contained(m.getOutputs(), alloc.getResult());
                       })) {
        c.temporaries.push_back(alloc);
        c.savedBytes += 2 * bytesOf(alloc);
      }
    SmallVector<Value> seen;
    for (GenericOp member : c.members)
      for (Value input : member.getInputs()) {
        if (input.getDefiningOp<AllocOp>() &&
            llvm::is_contained(c.temporaries, input.getDefiningOp<AllocOp>()))
          continue;
        if (llvm::is_contained(seen, input))
          c.savedBytes += bytesOf(input);
        else
          seen.push_back(input);
      }
  }

  void fuse(const Candidate &c, const ::spyre::Arch &arch, const Reshaped &reshaped) {
    GenericOp first = c.members.front();
    auto restoreLoops = [&] {
      for (GenericOp member : c.members)
        if (auto it = reshaped.find(member.getOperation()); it != reshaped.end())
          it->second.restore(member);
    };
    if (c.savedBytes == 0) {
      restoreLoops();
      if (reportMissed)
        first.emitRemark() << "not fused with the next " << c.members.size() - 1
                           << " generic(s): no device-memory traffic to save";
      return;
    }
    OpBuilder b(first);
    auto fused = FusedOp::create(b, first.getLoc());
    Block *body = b.createBlock(&fused.getBody());
    for (AllocOp alloc : c.temporaries)
      alloc->moveBefore(body, body->end());
    for (GenericOp member : c.members)
      member->moveBefore(body, body->end());
    // Keep the group only if a tile of whole rows fits LX, and if its rows
    // give the cores enough of them to work on.
    std::string why = whyFusedCannotRun(
        fused, arch, "a tile of whole rows of every member does not fit the usable LX");
    if (why.empty() && leavesCoresIdle(fused, c, arch))
      why = "its rows leave cores idle that its members alone would use";
    if (!why.empty()) {
      dissolve(fused);
      restoreLoops();
      if (reportMissed)
        first.emitRemark() << "not fused with the next " << c.members.size() - 1
                           << " generic(s): " << why;
      return;
    }
    for (AllocOp alloc : c.temporaries)
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<DeallocOp>(user))
          user->erase();
    // Terms several members recompute, once per tile: tried on a copy of
    // the group, kept if the group keeps its tile. The shared terms' tiles
    // take LX, and smaller tiles pay more transfer latencies; with less SFU
    // work per row the planner may also take larger tiles that leave a
    // core one step, whose load, compute and store then run one after the
    // other (GPT-2's first LayerNorm: 21.8 -> 28.1 us in one 16-row step
    // rather than two of 8).
    OpBuilder before(fused);
    auto trial = cast<FusedOp>(before.clone(*fused));
    if (shareRecomputedExpressions(trial) && tileOf(trial, arch) == tileOf(fused, arch))
      fused.erase();
    else
      trial.erase();
  }

  /// Whether the group's vector work, on the cores its row tiles keep
  /// busy, takes longer than its members' alone, each on the cores its own
  /// tiles keep busy, plus what grouping saves: the bytes of `c` and, per
  /// member after the first, an op's own transfers, latencies and wait for
  /// the op before (measured: a decode step's residual add and RMSNorm over
  /// one row of 2048 took 2.3 us more apart than grouped, about 4 us a
  /// member, eight transfer latencies). One row of a sampling step's 32,000
  /// scores runs on one core as a group and its elementwise members on all
  /// of them alone (a greedy choice 16.2 -> 8.2 us).
  static bool leavesCoresIdle(FusedOp fused, const Candidate &c, const ::spyre::Arch &arch) {
    SmallVector<int64_t> tile = tileOf(fused, arch);
    std::unique_ptr<GenericPlan> first = quietPlan(c.members.front(), arch);
    if (tile.empty() || !first)
      return false;
    int64_t used = std::min<int64_t>(arch.cores, first->parallelTiles(tile, -1));
    double grouped = 0, alone = 0;
    for (GenericOp member : c.members) {
      std::unique_ptr<GenericPlan> plan = quietPlan(member, arch, GenericPlan::Role::alone);
      if (!plan)
        return false;
      SmallVector<int64_t> own = plan->chooseTile(arch.cores, arch.lxUsableBytes());
      if (own.empty())
        return false;
      double work = plan->sfuCycles(1);
      grouped += work / double(std::max<int64_t>(used, 1));
      alone += work / double(std::clamp<int64_t>(plan->parallelTiles(own, -1), 1, arch.cores));
    }
    double saved = double(c.savedBytes) / arch.deviceBytesPerCycle() +
                   double(8 * arch.dmaLatencyCycles) * double(c.members.size() - 1);
    return grouped > alone + saved;
  }

  /// The tile `fused` would run with (empty if none fits).
  static SmallVector<int64_t> tileOf(FusedOp fused, const ::spyre::Arch &arch) {
    ScopedDiagnosticHandler silence(fused.getContext(), [](Diagnostic &) { return success(); });
    FailureOr<std::unique_ptr<OpPlan>> plan = OpPlan::get(fused, arch);
    if (failed(plan))
      return {};
    return (*plan)->chooseTile(arch.cores, arch.lxUsableBytes());
  }
};

} // namespace
