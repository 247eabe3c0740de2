//===- ShareExpressions.cpp - computing a row group's shared terms once ----===//
//
// Inductor writes a LayerNorm after a residual add as loops that each
// recompute the sum from the block's inputs (its mean, its variance and the
// normalization: `x + (y + bias)` three times), as its looped reductions
// do. Grouped on the same row tiles (FuseRows), the card would compute the
// sum three times per tile. Here an expression of the group's inputs that
// several members compute becomes a member of its own, placed before them,
// whose f32 tile the others read from LX: computed once, never stored. It
// may read a temporary the group writes (a softmax's `exp(x - max)`, which
// its sum and its normalization both compute): it then runs after the
// member writing it.
//
//===----------------------------------------------------------------------===//

#include "OpPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::spyre;

namespace {

/// Ops that cost the SFU nothing once planned (conversions rename values,
/// constants are operands): an expression of only these is not worth a
/// member of its own.
bool isFree(Operation *op) {
  return isa<arith::ConstantOp, arith::ExtFOp, arith::TruncFOp, arith::BitcastOp>(op);
}

/// Structural signatures of the values of one member's body: equal
/// signatures in two members are the same value at every point of the
/// domain. Arguments are named by their input buffer and indexing map,
/// results by their op, its attributes and their operands' signatures.
/// Signatures are numbered (`ids`, shared by the members), so that a value
/// used many times does not repeat its operands' text. Values a signature
/// cannot describe (loop positions) have none.
struct Signatures {
  DenseMap<Value, unsigned> of;
  /// Values with a signature, in body order (operands before users).
  SmallVector<Value> order;

  Signatures(GenericOp member, llvm::StringMap<unsigned> &ids) {
    auto number = [&](Value v, const std::string &text) {
      of[v] = ids.try_emplace(text, ids.size()).first->second;
      order.push_back(v);
    };
    Block &body = member.getBody().front();
    for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
      Value input = member.getInputs()[i];
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "arg " << input.getAsOpaquePointer() << " " << member.getInputMap(unsigned(i)) << " "
         << arg.getType();
      number(arg, text);
    }
    for (Operation &op : body.without_terminator()) {
      if (isa<IndexExprOp>(op) || op.getNumRegions() != 0 ||
          llvm::any_of(op.getOperands(), [&](Value v) { return !of.count(v); }))
        continue;
      for (auto [i, result] : llvm::enumerate(op.getResults())) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << op.getName() << op.getAttrDictionary() << " #" << i << " " << result.getType();
        for (Value operand : op.getOperands())
          os << " " << of.lookup(operand);
        number(result, text);
      }
    }
  }
};

/// The body arguments (the member's inputs) that `value` is computed from.
SmallVector<BlockArgument> argumentsOf(Value value) {
  SmallVector<BlockArgument> args;
  SmallVector<Value> work = {value};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v))
      args.push_back(arg);
    else
      llvm::append_range(work, v.getDefiningOp()->getOperands());
  }
  return args;
}

/// Whether `value` varies along every loop of `member` (a per-row value,
/// such as a row statistic, is cheap already: the body computes it once
/// per row).
bool variesAlongEveryLoop(GenericOp member, Value value) {
  llvm::SmallBitVector used(member.getNumLoops());
  for (BlockArgument arg : argumentsOf(value)) {
    AffineMap map = member.getInputMap(arg.getArgNumber());
    for (unsigned d = 0; d < member.getNumLoops(); ++d)
      if (map.isFunctionOfDim(d))
        used.set(d);
  }
  return used.all();
}

/// Whether the expression of `value` holds an op the SFU runs.
bool costsWork(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return false;
  if (!isFree(op))
    return true;
  return llvm::any_of(op->getOperands(), costsWork);
}

/// `member` reading each of `tiles` (a buffer, read through `map`) where
/// it computed the values listed with it. What the values were computed
/// from goes, and the inputs then unread with it (the generic's own
/// canonicalization).
void readTiles(GenericOp member, AffineMap map,
               ArrayRef<std::pair<Value, SmallVector<Value>>> tiles) {
  Block &body = member.getBody().front();
  SmallVector<Attribute> maps(member.getIndexingMaps().getValue());
  for (auto &[buffer, replaced] : tiles) {
    maps.insert(maps.begin() + member.getInputs().size(), AffineMapAttr::get(map));
    member.getInputsMutable().append(buffer);
    BlockArgument arg =
        body.addArgument(cast<BufferType>(buffer.getType()).getElementType(), member.getLoc());
    for (Value v : replaced)
      v.replaceAllUsesWith(arg);
  }
  member.setIndexingMapsAttr(ArrayAttr::get(member.getContext(), maps));
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty() && isPure(op))
      op->erase();
  PatternRewriter rewriter(member.getContext());
  (void)GenericOp::canonicalize(member, rewriter);
}

} // namespace

bool mlir::spyre::shareRecomputedExpressions(FusedOp fused) {
  Block &block = fused.getBody().front();
  SmallVector<GenericOp> members(block.getOps<GenericOp>());
  if (members.size() < 2)
    return false;
  GenericOp first = members.front();
  if (llvm::any_of(members, [](GenericOp member) {
        return !member.getDomainSizes().empty() || !member.getSymbols().empty();
      }))
    return false;
  // The member writing each group temporary: a term of one is computed
  // after it.
  DenseMap<Value, unsigned> writer;
  for (auto [m, member] : llvm::enumerate(members))
    for (Value output : member.getOutputs())
      writer[output] = unsigned(m);

  // Signatures computed by two members or more, with the members and values
  // computing them.
  llvm::StringMap<unsigned> ids;
  SmallVector<Signatures> sigs;
  DenseMap<unsigned, SmallVector<std::pair<unsigned, Value>>> where;
  for (auto [m, member] : llvm::enumerate(members)) {
    sigs.emplace_back(member, ids);
    for (Value v : sigs.back().order)
      if (!isa<BlockArgument>(v))
        where[sigs.back().of.lookup(v)].push_back({unsigned(m), v});
  }
  auto shared = [&](unsigned sig) {
    auto it = where.find(sig);
    if (it == where.end())
      return false;
    unsigned firstMember = it->second.front().first;
    return llvm::any_of(it->second, [&](auto &p) { return p.first != firstMember; });
  };
  // The largest shared expressions: shared values some use of which (in a
  // member computing them) is not itself shared; in the order they first
  // appear, so that the output does not depend on where values live.
  llvm::MapVector<unsigned, SmallVector<std::pair<unsigned, Value>>> chosen;
  for (const Signatures &member : sigs)
    for (Value v : member.order) {
      unsigned sig = member.of.lookup(v);
      if (isa<BlockArgument>(v) || chosen.count(sig) || !shared(sig))
        continue;
      const SmallVector<std::pair<unsigned, Value>> &uses = where[sig];
      auto [m0, v0] = uses.front();
      if (!costsWork(v0) || !variesAlongEveryLoop(members[m0], v0) ||
          !isa<FloatType>(v0.getType()))
        continue;
      bool maximal = llvm::any_of(uses, [&](auto &p) {
        return llvm::any_of(p.second.getUsers(), [&](Operation *user) {
          if (isa<YieldOp>(user))
            return true;
          return llvm::any_of(user->getResults(), [&](Value r) {
            auto it = sigs[p.first].of.find(r);
            return it == sigs[p.first].of.end() || !shared(it->second);
          });
        });
      });
      if (maximal)
        chosen[sig] = uses;
    }
  // They are computed before the first member using one and after the
  // members writing what they read: a term of a temporary written later
  // than another term's first use stays where it is.
  auto firstMemberAfterWriters = [&](unsigned m, Value v) {
    unsigned after = 0;
    for (BlockArgument arg : argumentsOf(v)) {
      auto it = writer.find(members[m].getInputs()[arg.getArgNumber()]);
      if (it != writer.end())
        after = std::max(after, it->second + 1);
    }
    return after;
  };
  unsigned earliest = members.size();
  for (bool dropped = true; dropped && !chosen.empty();) {
    earliest = members.size();
    for (auto &[s, uses] : chosen)
      earliest = std::min(earliest, uses.front().first);
    SmallVector<unsigned> late;
    for (auto &[s, uses] : chosen)
      if (firstMemberAfterWriters(uses.front().first, uses.front().second) > earliest)
        late.push_back(s);
    for (unsigned s : late)
      chosen.erase(chosen.find(s));
    dropped = !late.empty();
  }
  if (chosen.empty())
    return false;

  // One member computing them all, before the first member using one, over
  // the same loops, each into an f32 (or the value's type) tile of the
  // domain laid out row-major.
  ArrayRef<int64_t> sizes = first.getStaticDomain();
  MLIRContext *context = fused.getContext();
  AffineExpr linear = getAffineConstantExpr(0, context);
  int64_t count = 1;
  for (auto [d, size] : llvm::enumerate(sizes)) {
    linear = linear * size + getAffineDimExpr(unsigned(d), context);
    count *= size;
  }
  AffineMap tileMap = AffineMap::get(unsigned(sizes.size()), 0, linear);

  OpBuilder b(members[earliest]);
  Location loc = members[earliest].getLoc();
  // The inputs the expressions read (from the member each is taken from),
  // then the op, then its body.
  SmallVector<Value> inputs, outputs;
  SmallVector<Attribute> maps;
  SmallVector<BlockArgument> args;
  DenseSet<Value> visited;
  std::function<void(unsigned, Value)> collect = [&](unsigned m, Value v) {
    if (!visited.insert(v).second)
      return;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      inputs.push_back(members[m].getInputs()[arg.getArgNumber()]);
      maps.push_back(AffineMapAttr::get(members[m].getInputMap(arg.getArgNumber())));
      args.push_back(arg);
      return;
    }
    for (Value operand : v.getDefiningOp()->getOperands())
      collect(m, operand);
  };
  for (auto &[s, uses] : chosen)
    collect(uses.front().first, uses.front().second);
  OpBuilder ab = OpBuilder::atBlockBegin(&block);
  for (auto &[s, uses] : chosen)
    outputs.push_back(AllocOp::create(
        ab, loc, BufferType::get({count}, uses.front().second.getType()), ValueRange{}));
  for (size_t i = 0; i < outputs.size(); ++i)
    maps.push_back(AffineMapAttr::get(tileMap));
  SmallVector<Attribute> parallel(
      sizes.size(), IteratorTypeAttr::get(context, utils::IteratorType::parallel));
  auto once = GenericOp::create(b, loc, ValueRange{}, first.getStaticDomainAttr(), ValueRange{},
                                inputs, outputs, b.getArrayAttr(maps), b.getArrayAttr(parallel),
                                ArrayAttr());
  SmallVector<Type> argTypes;
  for (BlockArgument arg : args)
    argTypes.push_back(arg.getType());
  Block *body = b.createBlock(&once.getBody(), {}, argTypes,
                              SmallVector<Location>(argTypes.size(), loc));
  IRMapping mapping;
  for (auto [arg, copy] : llvm::zip_equal(args, body->getArguments()))
    mapping.map(Value(arg), Value(copy));
  std::function<Value(Value)> rebuild = [&](Value v) -> Value {
    if (Value done = mapping.lookupOrNull(v))
      return done;
    Operation *op = v.getDefiningOp();
    for (Value operand : op->getOperands())
      rebuild(operand);
    Operation *copy = b.clone(*op, mapping);
    return copy->getResult(cast<OpResult>(v).getResultNumber());
  };
  SmallVector<Value> yielded;
  for (auto &[s, uses] : chosen)
    yielded.push_back(rebuild(uses.front().second));
  YieldOp::create(b, loc, yielded);

  // Every member reads the tiles instead of computing them.
  for (unsigned m = 0; m < members.size(); ++m) {
    SmallVector<std::pair<Value, SmallVector<Value>>> tiles;
    for (auto [i, entry] : llvm::enumerate(chosen)) {
      SmallVector<Value> replaced;
      for (auto &[um, v] : entry.second)
        if (um == m)
          replaced.push_back(v);
      if (!replaced.empty())
        tiles.push_back({outputs[i], replaced});
    }
    if (!tiles.empty())
      readTiles(members[m], tileMap, tiles);
  }
  return true;
}
