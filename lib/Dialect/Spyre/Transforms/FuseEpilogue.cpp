//===- FuseEpilogue.cpp - elementwise consumers on a matmul's output tile -===//
//
// A spyre.matmul writing a temporary of its kernel that one elementwise
// spyre.generic reads (bias, activation, residual, scale, cast) is grouped
// with that generic in a spyre.fused: MatmulPlan then runs the generic's
// body on each output tile in LX after its last K step, and the product
// never reaches device memory. Two matmuls of the same lhs whose outputs
// only that generic reads (a gated MLP, silu(x @ Wg) * (x @ Wu)) are grouped
// with it together: MatmulPlan computes both products of an output tile in
// one pass over K, the lhs panel loaded once for both. Two such matmuls
// that write outputs of the kernel (a layer's key and value projections)
// are grouped without an epilogue, each tile storing both products.
//
//===----------------------------------------------------------------------===//

#include "GenericLoops.h"
#include "Linearize.h"
#include "OpPlan.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYREFUSEEPILOGUE
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {

struct FuseEpilogue : mlir::spyre::impl::SpyreFuseEpilogueBase<FuseEpilogue> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<::spyre::Arch> arch = getArch(getOperation());
    if (!arch)
      return signalPassFailure();
    getOperation().walk([&](KernelOp kernel) {
      for (auto matmul : llvm::to_vector(kernel.getBody().front().getOps<MatmulOp>()))
        if (!isa<FusedOp>(matmul->getParentOp()) && !fusePair(matmul, *arch))
          fuse(matmul, *arch);
      if (!chain)
        return;
      for (Operation *op = &kernel.getBody().front().front(); op; op = op->getNextNode())
        if (auto group = dyn_cast<FusedOp>(op))
          op = fuseChain(group, *arch);
    });
  }

  /// The product and the epilogue of `group` when it holds exactly one of
  /// each (and allocations).
  static std::pair<MatmulOp, GenericOp> productAndEpilogue(FusedOp group) {
    Block &body = group.getBody().front();
    auto matmuls = llvm::to_vector(body.getOps<MatmulOp>());
    auto generics = llvm::to_vector(body.getOps<GenericOp>());
    if (matmuls.size() != 1 || generics.size() != 1)
      return {};
    return {matmuls[0], generics[0]};
  }

  /// Merges `first` with the group after it into a chain when the second's
  /// product reads the first's epilogue output, a temporary only it reads
  /// (a multilayer perceptron), and ChainPlan can run the two; else says
  /// why with `report-missed`. Returns the group now where `first` was.
  Operation *fuseChain(FusedOp first, const ::spyre::Arch &arch) {
    auto [mm1, act] = productAndEpilogue(first);
    auto second = dyn_cast_or_null<FusedOp>(nextComputeOp(first));
    if (!mm1 || !second)
      return first;
    auto [mm2, epi] = productAndEpilogue(second);
    if (!mm2 || act.getOutputs().size() != 1 || mm2.getLhs() != act.getOutputs()[0])
      return first;
    auto missed = [&](const Twine &why) {
      if (reportMissed)
        mm1.emitRemark() << "not run as a chain with the next product: " << why;
      return first.getOperation();
    };
    Value hidden = mm2.getLhs();
    auto alloc = hidden.getDefiningOp<AllocOp>();
    if (!alloc || alloc->getBlock() != first->getBlock())
      return missed("its epilogue's output is not a temporary of the kernel");
    for (Operation *user : hidden.getUsers())
      if (user != act.getOperation() && user != mm2.getOperation() && !isa<DeallocOp>(user))
        return missed("its epilogue's output is also read by '" +
                      user->getName().getStringRef() + "'");
    if (cast<BufferType>(mm1.getInit().getType()).getDimSize(0) < kChainMinRows)
      return missed("fewer than " + Twine(kChainMinRows) + " rows");
    // Chained only where the plans' estimates say it is faster.
    std::optional<double> firstCycles = estimatedCycles(first, arch),
                          secondCycles = estimatedCycles(second, arch);
    // The two groups' members, the hidden activations' allocation first,
    // into one group; back into their own groups if it cannot run.
    SmallVector<Operation *> ops = {alloc};
    SmallVector<Operation *> firstOps, secondOps;
    for (Operation &op : first.getBody().front())
      firstOps.push_back(&op);
    for (Operation &op : second.getBody().front())
      secondOps.push_back(&op);
    llvm::append_range(ops, firstOps);
    llvm::append_range(ops, secondOps);
    for (Operation *op : ops)
      op->moveBefore(first);
    first->erase();
    second->erase();
    std::string why = group(ops[0], ops, {}, arch, "no tile of the chain fits the usable LX");
    if (why.empty()) {
      auto chained = cast<FusedOp>(ops[0]->getParentOp());
      std::optional<double> together = estimatedCycles(chained, arch);
      if (!firstCycles || !secondCycles || !together ||
          *together < *firstCycles + *secondCycles) {
        eraseDeallocs({alloc});
        return chained;
      }
      why = "its estimate, " + std::to_string(int64_t(*together)) +
            " cycles, is not below the two products' " +
            std::to_string(int64_t(*firstCycles + *secondCycles));
      dissolve(chained);
    }
    missed(why);
    // Each group could run before: it can again.
    group(firstOps.front(), firstOps, {}, arch, "");
    group(secondOps.front(), secondOps, {}, arch, "");
    return firstOps.front()->getParentOp();
  }

  /// The estimate of `group`'s plan on the card's cores, if it has one.
  static std::optional<double> estimatedCycles(FusedOp group, const ::spyre::Arch &arch) {
    FailureOr<std::unique_ptr<OpPlan>> plan = OpPlan::get(group, arch);
    if (failed(plan) || !*plan)
      return std::nullopt;
    return (*plan)->estimatedCycles(arch.cores, arch.lxUsableBytes());
  }

  /// Below this many rows a chain's row groups are too short for the PT.
  static constexpr int64_t kChainMinRows = 64;

  /// Whether `value` is an argument of the kernel (an output its callers
  /// read), not a temporary.
  static bool isOutput(Value value) { return isa<BlockArgument>(value); }

  /// The next op after `op` that is not an allocation.
  static Operation *nextComputeOp(Operation *op) {
    do
      op = op->getNextNode();
    while (op && isa<AllocOp, DeallocOp>(op));
    return op;
  }

  /// Groups `first`, the matmul after it and their reader when the two
  /// share their lhs and only that generic reads their products (a gated
  /// MLP), or the two alone when both write outputs of the kernel; whether
  /// it did. When the plan cannot run the pair, the second matmul alone is
  /// left to `fuse`.
  bool fusePair(MatmulOp first, const ::spyre::Arch &arch) {
    auto second = dyn_cast_or_null<MatmulOp>(nextComputeOp(first));
    if (!second || second.getLhs() != first.getLhs() ||
        first.getRhs().getType() != second.getRhs().getType() ||
        first.getInit().getType() != second.getInit().getType())
      return false;
    for (StringRef flag : {"transpose_lhs", "transpose_rhs", "accumulate"})
      if (first->hasAttr(flag) != second->hasAttr(flag))
        return false;
    if (isOutput(first.getInit()) && isOutput(second.getInit()) &&
        !first->hasAttr("accumulate") && first.getInit() != second.getInit() &&
        second.getRhs() != first.getInit()) {
      std::string why = group(first, {first, second}, {}, arch,
                              "no tile with both products' slots fits the usable LX");
      if (!why.empty() && reportMissed)
        first.emitRemark() << "not computed beside the next matmul: " << why;
      return why.empty();
    }
    std::string why;
    GenericOp reader = epilogueOf(second, why);
    if (!reader || onlyReader(first, why) != reader)
      return false;
    Operation *allocs[] = {first.getInit().getDefiningOp(), second.getInit().getDefiningOp()};
    why = group(first, {allocs[0], allocs[1], first, second, reader}, allocs, arch,
                "no tile with both products' slots fits the usable LX");
    if (!why.empty() && reportMissed)
      first.emitRemark() << "not computed beside the next matmul: " << why;
    return why.empty();
  }

  /// Moves `ops`, in this order, into a new spyre.fused at `at`, and keeps
  /// it when the plan can run the group, erasing the deallocations of its
  /// `temporaries`; else puts the ops back and returns why not.
  static std::string group(Operation *at, ArrayRef<Operation *> ops,
                           ArrayRef<Operation *> temporaries, const ::spyre::Arch &arch,
                           StringRef noTile) {
    // An allocation between the members (an epilogue's output) must
    // dominate the group.
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (auto alloc = operand.getDefiningOp<AllocOp>();
            alloc && alloc->getBlock() == at->getBlock() && at->isBeforeInBlock(alloc) &&
            !llvm::is_contained(ops, alloc.getOperation()))
          alloc->moveBefore(at);
    OpBuilder b(at);
    auto fused = FusedOp::create(b, at->getLoc());
    Block *body = b.createBlock(&fused.getBody());
    for (Operation *op : ops)
      op->moveBefore(body, body->end());
    std::string why = whyFusedCannotRun(fused, arch, noTile);
    if (!why.empty()) {
      dissolve(fused);
      return why;
    }
    eraseDeallocs(temporaries);
    return "";
  }

  /// A temporary that lives only inside one kernel's group needs no
  /// deallocation: the group's plan places it in LX.
  static void eraseDeallocs(ArrayRef<Operation *> temporaries) {
    for (Operation *temporary : temporaries)
      for (Operation *user : llvm::make_early_inc_range(temporary->getUsers()))
        if (isa<DeallocOp>(user))
          user->erase();
  }

  /// The generic that is the only reader of `matmul`'s output, a temporary
  /// of the kernel, when nothing but allocations lies between them; else
  /// the reason in `why`.
  static GenericOp epilogueOf(MatmulOp matmul, std::string &why) {
    GenericOp reader = onlyReader(matmul, why);
    if (!reader)
      return {};
    if (!matmul->isBeforeInBlock(reader)) {
      why = "its output is read before it is written";
      return {};
    }
    if (nextComputeOp(matmul) != reader.getOperation()) {
      why = "'" + nextComputeOp(matmul)->getName().getStringRef().str() +
            "' runs between it and its reader";
      return {};
    }
    return reader;
  }

  /// The generic that is the only reader of `matmul`'s output, a temporary
  /// of the kernel (deallocations aside); else the reason in `why`.
  static GenericOp onlyReader(MatmulOp matmul, std::string &why) {
    auto alloc = matmul.getInit().getDefiningOp<AllocOp>();
    if (!alloc || alloc->getBlock() != matmul->getBlock()) {
      why = "its output is not a temporary of the kernel";
      return {};
    }
    GenericOp reader;
    for (Operation *user : alloc->getUsers()) {
      if (user == matmul.getOperation() || user == reader.getOperation() ||
          isa<DeallocOp>(user))
        continue;
      if (reader || !isa<GenericOp>(user)) {
        why = "its output is read by more than one op";
        return {};
      }
      reader = cast<GenericOp>(user);
    }
    if (!reader) {
      why = "its output is not read";
      return {};
    }
    return reader;
  }

  void fuse(MatmulOp matmul, const ::spyre::Arch &arch) {
    std::string why;
    GenericOp epilogue = epilogueOf(matmul, why);
    if (!epilogue) {
      if (reportMissed)
        matmul.emitRemark() << "no epilogue fused: " << why;
      return;
    }
    GenericLoops before = GenericLoops::of(epilogue);
    mergeColumnLoops(epilogue);
    // Kept only if the plan takes the epilogue and a tile fits LX.
    Operation *alloc = matmul.getInit().getDefiningOp();
    why = group(matmul, {alloc, matmul, epilogue}, alloc, arch,
                "no tile with the epilogue's slots fits the usable LX");
    if (why.empty())
      return;
    before.restore(epilogue);
    if (reportMissed)
      matmul.emitRemark() << "epilogue not fused: " << why;
  }

  /// Merges the epilogue's adjacent column loops l and l + 1 (parallel)
  /// wherever every map reads them as one loop (the coefficient of l is
  /// that of l + 1 times its size: a rotary embedding's heads, cut in two
  /// loops by the views they came through). MatmulPlan's output tiles hold
  /// whole blocks of the outermost column loop: the 32 heads of a decode
  /// step's query projection, seen as 4 x 8, made blocks of 8 heads and
  /// ran it on 4 of 32 cores (98.2 us; one head a block: 64.5).
  static void mergeColumnLoops(GenericOp op) {
    if (!op.getDomainSizes().empty())
      return;
    SmallVector<AffineMap> maps;
    for (Attribute map : op.getIndexingMaps())
      maps.push_back(cast<AffineMapAttr>(map).getValue());
    SmallVector<IndexExprOp> indices;
    op.getBody().walk([&](IndexExprOp index) { indices.push_back(index); });
    SmallVector<int64_t> sizes(op.getStaticDomain());
    SmallVector<Attribute> iterators(op.getIteratorTypes().getValue());
    auto merges = [&](AffineMap map, unsigned l) {
      return llvm::all_of(map.getResults(), [&](AffineExpr result) {
        if (!isLinear(result))
          return false;
        LinearAccess c = linearCoefficients(result, map.getNumDims());
        return c.strides[l] == c.strides[l + 1] * sizes[l + 1];
      });
    };
    auto parallel = [&](unsigned l) {
      return cast<IteratorTypeAttr>(iterators[l]).getValue() == utils::IteratorType::parallel;
    };
    bool merged = false;
    for (unsigned l = sizes.size() - 1; l-- > 1;) {
      if (!parallel(l) || !parallel(l + 1) ||
          !llvm::all_of(maps, [&](AffineMap m) { return merges(m, l); }) ||
          !llvm::all_of(indices, [&](IndexExprOp i) { return merges(i.getMap(), l); }))
        continue;
      // d_l's term is d_{l+1}'s times its size: d_{l+1} becomes the merged
      // loop (d_l * size + d_{l+1}) and d_l's term goes.
      MLIRContext *context = op.getContext();
      unsigned n = sizes.size();
      SmallVector<AffineExpr> replacements;
      for (unsigned d = 0; d < n; ++d)
        replacements.push_back(d == l ? getAffineConstantExpr(0, context)
                                      : getAffineDimExpr(d > l ? d - 1 : d, context));
      for (AffineMap &m : maps)
        m = m.replaceDimsAndSymbols(replacements, {}, n - 1, 0);
      for (IndexExprOp index : indices)
        index.setMapAttr(AffineMapAttr::get(
            index.getMap().replaceDimsAndSymbols(replacements, {}, n - 1, 0)));
      sizes[l] *= sizes[l + 1];
      sizes.erase(sizes.begin() + l + 1);
      iterators.erase(iterators.begin() + l + 1);
      merged = true;
    }
    if (!merged)
      return;
    MLIRContext *context = op.getContext();
    SmallVector<Attribute> mapAttrs;
    for (AffineMap m : maps)
      mapAttrs.push_back(AffineMapAttr::get(m));
    op.setStaticDomainAttr(DenseI64ArrayAttr::get(context, sizes));
    op.setIndexingMapsAttr(ArrayAttr::get(context, mapAttrs));
    op.setIteratorTypesAttr(ArrayAttr::get(context, iterators));
  }
};

} // namespace
