//===- FuseRows.cpp - generics sharing row tiles in LX --------------------===//

#include "GenericPlan.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
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
      for (const Candidate &candidate : candidates(kernel, *arch))
        fuse(candidate, *arch);
    });
  }

  /// A plan of `op` without diagnostics (nothing if the card cannot run it).
  static std::unique_ptr<GenericPlan> quietPlan(GenericOp op, const ::spyre::Arch &arch) {
    ScopedDiagnosticHandler silence(op.getContext(), [](Diagnostic &) { return success(); });
    auto plan = std::make_unique<GenericPlan>(op, arch);
    if (failed(plan->analyze()))
      return nullptr;
    return plan;
  }

  SmallVector<Candidate> candidates(KernelOp kernel, const ::spyre::Arch &arch) {
    SmallVector<Candidate> result;
    Candidate current;
    std::unique_ptr<GenericPlan> firstPlan;
    auto close = [&] {
      if (current.members.size() >= 2)
        result.push_back(current);
      current = Candidate();
      firstPlan.reset();
    };
    for (Operation &op : kernel.getBody().front()) {
      if (isa<AllocOp, DeallocOp>(op))
        continue;
      auto generic = dyn_cast<GenericOp>(op);
      std::unique_ptr<GenericPlan> plan = generic ? quietPlan(generic, arch) : nullptr;
      if (!plan) {
        close();
        continue;
      }
      if (!current.members.empty() && !joins(current, generic, *plan, *firstPlan))
        close();
      if (current.members.empty())
        firstPlan = std::move(plan);
      current.members.push_back(generic);
    }
    close();
    for (Candidate &c : result)
      account(kernel, c);
    return result;
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

  void fuse(const Candidate &c, const ::spyre::Arch &arch) {
    GenericOp first = c.members.front();
    if (c.savedBytes == 0) {
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
    // Keep the group only if a tile of whole rows fits LX.
    std::string why = whyFusedCannotRun(
        fused, arch, "a tile of whole rows of every member does not fit the usable LX");
    if (!why.empty()) {
      dissolve(fused);
      if (reportMissed)
        first.emitRemark() << "not fused with the next " << c.members.size() - 1
                           << " generic(s): " << why;
      return;
    }
    for (AllocOp alloc : c.temporaries)
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<DeallocOp>(user))
          user->erase();
  }
};

} // namespace
