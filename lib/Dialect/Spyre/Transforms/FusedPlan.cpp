//===- FusedPlan.cpp - running a spyre.fused group on the card ------------===//
//
// The members of a group share the tile grid of whole rows: a core loads a
// row tile of each input once, runs every member on it in order, and stores
// only the outputs that leave the group. What a member wrote is read by later
// members from the LX slot it was written to (the producer's result view),
// never from device memory, which requires every reader to index it as its
// producer wrote it.
//
//===----------------------------------------------------------------------===//

#include "GenericPlan.h"

using namespace mlir;
using namespace mlir::spyre;

namespace {

class FusedPlan : public OpPlan {
public:
  FusedPlan(FusedOp op, const ::spyre::Arch &arch) : OpPlan(op, arch), fused(op) {}
  LogicalResult analyze();

  SPYRE_OPPLAN_OVERRIDES

private:
  struct Link {
    unsigned member, output;
  };
  mutable FusedOp fused;
  SmallVector<std::unique_ptr<GenericPlan>> members;
  bool dropped(unsigned member, const LxSlot &slot) const;
  /// Whether `member` reads input `k` from another member's LX slot.
  bool readsElsewhere(unsigned member, unsigned k) const {
    return links[member].count(k) || shared[member].count(k);
  }

  /// Per member: inputs produced by an earlier member (`links`, from its
  /// output) or loaded by one (`shared`, from its input); outputs kept in LX.
  SmallVector<DenseMap<unsigned, Link>> links, shared;
  SmallVector<llvm::SmallDenseSet<unsigned>> internal;
};

int64_t FusedPlan::parallelUnits() const { return members.front()->parallelUnits(); }

LogicalResult FusedPlan::analyze() {
  Block &block = fused.getBody().front();
  DenseMap<Value, Link> producers; // group temporaries, by value
  for (Operation &op : block) {
    auto generic = dyn_cast<GenericOp>(op);
    if (!generic)
      continue;
    auto plan = std::make_unique<GenericPlan>(
        generic, arch, GenericPlan::Role::member,
        members.empty() ? -1 : members.front()->getColLoop());
    if (failed(plan->analyze()))
      return failure();
    const GenericPlan &first = members.empty() ? *plan : *members.front();
    if (plan->getSizes() != first.getSizes() || plan->getRowLoop() != first.getRowLoop() ||
        plan->getColLoop() != first.getColLoop())
      return fused.emitError() << "cannot fuse: the generics do not share their loops and tiling";
    for (auto [i, size] : llvm::enumerate(plan->getSizes()))
      if (plan->getReductionLoops()[i] && int(i) != plan->getColLoop() && size > 1)
        return fused.emitError() << "cannot fuse: a reduction over more than one loop";
    unsigned member = members.size();
    links.emplace_back();
    shared.emplace_back();
    internal.emplace_back();
    for (auto [k, input] : llvm::enumerate(generic.getInputs())) {
      auto it = producers.find(input);
      if (it == producers.end()) {
        if (input.getParentBlock() == &block)
          return fused.emitError() << "cannot fuse: input " << k << " of member " << member
                                   << " is a group temporary read before it is written";
        // The same tile already loaded by an earlier member is reused.
        const LinearAccess &reads = plan->getInputAccess(unsigned(k));
        for (auto [p, earlier] : llvm::enumerate(members)) {
          OperandRange theirs = earlier->getGeneric().getInputs();
          for (auto [q, value] : llvm::enumerate(theirs)) {
            const LinearAccess &a = earlier->getInputAccess(unsigned(q));
            if (value == input && a.base == reads.base && a.strides == reads.strides &&
                !links[p].count(unsigned(q)) && !shared[p].count(unsigned(q)) &&
                !shared.back().count(unsigned(k)))
              shared.back()[unsigned(k)] = {unsigned(p), unsigned(q)};
          }
        }
        continue;
      }
      const LinearAccess &wrote = members[it->second.member]->getOutputAccess(it->second.output);
      const LinearAccess &reads = plan->getInputAccess(unsigned(k));
      if (wrote.base != reads.base || wrote.strides != reads.strides)
        return fused.emitError() << "cannot fuse: member " << member
                                 << " reads a group temporary other than as it was written";
      links.back()[unsigned(k)] = it->second;
    }
    // Later members read every output of this one from LX (it is stored too
    // unless it is a temporary of the group).
    for (auto [o, output] : llvm::enumerate(generic.getOutputs())) {
      producers[output] = {member, unsigned(o)};
      if (output.getParentBlock() == &block)
        internal.back().insert(unsigned(o));
    }
    // An input read from elsewhere has no runs of its own to share.
    if (llvm::any_of(llvm::seq<unsigned>(0, generic.getInputs().size()), [&](unsigned k) {
          return readsElsewhere(member, k) && plan->sharesRuns(k);
        }))
      plan->dropSharedRuns();
    members.push_back(std::move(plan));
  }
  return success();
}

LogicalResult FusedPlan::verifyTile(ArrayRef<int64_t> tile) const {
  const GenericPlan &first = *members.front();
  for (const auto &member : members)
    if (failed(member->verifyTile(tile)))
      return failure();
  int col = first.getColLoop();
  if (tile[col] != first.getSizes()[col])
    return fused.emitError() << "spyre.tile of a fused group must cover whole rows (loop " << col
                             << " of size " << first.getSizes()[col] << ")";
  return success();
}

bool FusedPlan::dropped(unsigned member, const LxSlot &slot) const {
  // Inputs read from another member's slots need none of their own.
  StringRef name = slot.name;
  unsigned k;
  if (!name.consume_front("input") || name.getAsInteger(10, k))
    return false;
  return readsElsewhere(member, k);
}

SmallVector<LxSlot> FusedPlan::slots(ArrayRef<int64_t> tile) const {
  SmallVector<LxSlot> result;
  for (auto [m, member] : llvm::enumerate(members))
    for (LxSlot slot : member->slots(tile)) {
      if (dropped(unsigned(m), slot))
        continue;
      slot.name = "m" + std::to_string(m) + "." + slot.name;
      // Temporaries of different members are live at different times.
      if (slot.end != INT64_MAX) {
        slot.begin += int64_t(m) << 32;
        slot.end += int64_t(m) << 32;
      }
      result.push_back(std::move(slot));
    }
  return result;
}

SmallVector<int64_t> FusedPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  const GenericPlan &first = *members.front();
  ArrayRef<int64_t> sizes = first.getSizes();
  int row = first.getRowLoop(), col = first.getColLoop();
  SmallVector<int64_t> tile(sizes.size(), 1);
  tile[col] = sizes[col];
  auto fits = [&](ArrayRef<int64_t> t) {
    int64_t total;
    assignLx(slots(t), arch.stickBytes, total);
    return total <= lxBytes;
  };
  if (!fits(tile))
    return {};
  if (row < 0)
    return tile;
  int64_t others = first.parallelTiles(tile, row);
  // The members' SFU work together, and the group's own transfers: the
  // inputs a member loads (not read from another member's slots) and the
  // outputs that leave the group. Counted as if none of the members' values
  // stayed in LX, every LayerNorm of a 512-token layer ran one tile per
  // core, its load, SFU work and store one after the other (GPT-2's first
  // LayerNorm 33.4 us, in two tiles per core 25.8).
  double sfu = 0;
  int64_t transfers = 0;
  for (auto [m, member] : llvm::enumerate(members)) {
    sfu += member->sfuCycles(cores);
    GenericOp generic = member->getGeneric();
    for (unsigned k = 0, e = generic.getInputs().size(); k < e; ++k)
      transfers += readsElsewhere(unsigned(m), k) ? 0 : 1;
    transfers += int64_t(generic.getOutputs().size()) - int64_t(internal[m].size());
  }
  int64_t depth = overlapDepth(sfu, transfers, arch, 4);
  int64_t pieces = std::max<int64_t>(1, llvm::divideCeil(cores * depth, others));
  tile[row] = largestFitting(llvm::divideCeil(sizes[row], pieces), 1, [&](int64_t r) {
    SmallVector<int64_t> t(tile);
    t[row] = r;
    return fits(t);
  });
  return tile;
}

LogicalResult FusedPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                               ArrayRef<int64_t> lx) const {
  // Each member's slots are a run of the group's, less the dropped ones.
  SmallVector<SmallVector<int64_t>> memberLx(members.size());
  std::vector<GenericPlan::Geometry> geometries;
  geometries.reserve(members.size());
  size_t next = 0;
  for (auto [m, member] : llvm::enumerate(members)) {
    for (const LxSlot &slot : member->slots(tile))
      memberLx[m].push_back(dropped(unsigned(m), slot) ? 0 : lx[next++]);
    geometries.push_back(member->geometry(tile, memberLx[m]));
  }
  int64_t groups = geometries.front().groups;
  for (int64_t core = 0; core < cores; ++core) {
    int64_t gBegin = groups * core / cores, gEnd = groups * (core + 1) / cores;
    SmallVector<SmallVector<bool>> held;
    for (auto [m, member] : llvm::enumerate(members))
      held.push_back(member->heldOnCore(geometries[m], gBegin, gEnd));
    em.pipeline(core, fused.getLoc(), gEnd - gBegin, [&](int64_t i) {
      TileStep step;
      SmallVector<SmallVector<RefAttr>> results(members.size()), inputs(members.size());
      SmallVector<std::function<void(StepCompute &)>> computes;
      for (auto [m, member] : llvm::enumerate(members)) {
        GenericPlan::Overrides overrides;
        for (auto [input, link] : links[m])
          overrides.inputViews[input] = results[link.member][link.output];
        for (auto [input, from] : shared[m])
          overrides.inputViews[input] = inputs[from.member][from.output];
        overrides.internalOutputs = internal[m];
        TileStep part = member->buildStep(em, geometries[m], gBegin + i, 0, i, &overrides,
                                          &results[m], &inputs[m], held[m]);
        llvm::append_range(step.loads, part.loads);
        llvm::append_range(step.stores, part.stores);
        computes.push_back(std::move(part.compute));
      }
      step.compute = [computes](StepCompute &sc) {
        for (const auto &compute : computes)
          compute(sc);
      };
      return step;
    });
  }
  return success();
}

} // namespace

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeFusedPlan(FusedOp op,
                                                             const ::spyre::Arch &arch) {
  return analyzedPlan<FusedPlan>(op, arch);
}
