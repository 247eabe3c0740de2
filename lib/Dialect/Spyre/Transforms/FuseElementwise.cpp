//===- FuseElementwise.cpp - inline elementwise producers into consumers ---===//
//
// A fused pair computes every element of the consumer from the same values
// as before, so results are unchanged; what disappears is the temporary's
// write and read through device memory.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYREFUSEELEMENTWISE
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {

/// Why `producer` cannot be fused into the next reader of its output, or the
/// consumer and the position of the temporary among its inputs.
struct Candidate {
  GenericOp consumer;
  unsigned input = 0;
  std::string whyNot;
};

Candidate analyse(GenericOp producer) {
  Candidate c;
  if (producer.getOutputs().size() != 1 || producer.getCombiners())
    return c.whyNot = "the producer has several outputs or combiners", c;
  if (!producer.getReductionLoops().empty())
    return c.whyNot = "the producer reduces", c;
  Value temp = producer.getOutputs().front();
  if (!temp.getDefiningOp<AllocOp>())
    return c.whyNot = "its output is not a temporary of the kernel", c;
  AffineMap written = producer.getOutputMap(0);
  if (!written.isPermutation())
    return c.whyNot = "the producer does not write each element exactly once", c;
  GenericOp consumer;
  for (Operation *user : temp.getUsers()) {
    if (user == producer || isa<DeallocOp>(user))
      continue;
    auto generic = dyn_cast<GenericOp>(user);
    if (!generic || consumer)
      return c.whyNot = "the temporary has other users than one consumer", c;
    consumer = generic;
  }
  if (!consumer)
    return c.whyNot = "the temporary is never read", c;
  if (consumer->getBlock() != producer->getBlock() || !producer->isBeforeInBlock(consumer))
    return c.whyNot = "the consumer does not follow the producer in the kernel", c;
  // Nothing in between may write what the producer reads.
  for (Operation *op = producer->getNextNode(); op != consumer; op = op->getNextNode())
    if (!isa<AllocOp, DimOp, DeallocOp>(op) && !isMemoryEffectFree(op))
      return c.whyNot = "another op runs between producer and consumer", c;
  if (llvm::is_contained(consumer.getOutputs(), temp))
    return c.whyNot = "the consumer also writes the temporary", c;
  // Fused, the consumer's writes would interleave with the producer's reads.
  for (Value out : consumer.getOutputs())
    if (llvm::is_contained(producer.getInputs(), out))
      return c.whyNot = "the consumer overwrites an input of the producer", c;
  if (producer.getStaticDomain() != consumer.getStaticDomain() ||
      producer.getDomainSizes() != consumer.getDomainSizes())
    return c.whyNot = "producer and consumer iterate over different domains", c;
  if (!producer.getSymbols().empty() || !consumer.getSymbols().empty())
    return c.whyNot = "maps with symbols are not fused yet", c;
  auto inputs = consumer.getInputs();
  auto it = llvm::find(inputs, temp);
  unsigned index = it - inputs.begin();
  if (llvm::count(inputs, temp) != 1 || consumer.getInputMap(index) != written)
    return c.whyNot = "the consumer reads the temporary elsewhere than it was written", c;
  c.consumer = consumer;
  c.input = index;
  return c;
}

/// Replaces producer + consumer by one generic: the producer's inputs, then
/// the consumer's other inputs; the producer's body computes the value the
/// consumer used to load.
void fuse(GenericOp producer, const Candidate &c, RewriterBase &rewriter) {
  GenericOp consumer = c.consumer;
  SmallVector<Value> inputs(producer.getInputs());
  SmallVector<Attribute> maps;
  for (unsigned i = 0; i < producer.getInputs().size(); ++i)
    maps.push_back(AffineMapAttr::get(producer.getInputMap(i)));
  for (auto [i, input] : llvm::enumerate(consumer.getInputs())) {
    if (i == c.input)
      continue;
    inputs.push_back(input);
    maps.push_back(AffineMapAttr::get(consumer.getInputMap(i)));
  }
  for (unsigned i = 0; i < consumer.getOutputs().size(); ++i)
    maps.push_back(AffineMapAttr::get(consumer.getOutputMap(i)));

  rewriter.setInsertionPoint(consumer);
  auto fused = GenericOp::create(
      rewriter, consumer.getLoc(), consumer.getDomainSizes(), consumer.getStaticDomainAttr(),
      ValueRange{}, inputs, consumer.getOutputs(), rewriter.getArrayAttr(maps),
      consumer.getIteratorTypes(), consumer.getCombinersAttr());
  SmallVector<Type> argTypes;
  for (Value v : inputs)
    argTypes.push_back(cast<BufferType>(v.getType()).getElementType());
  SmallVector<Location> locs(argTypes.size(), consumer.getLoc());
  Block *body = rewriter.createBlock(&fused.getBody(), {}, argTypes, locs);

  IRMapping mapping;
  Block &producerBody = producer.getBody().front();
  for (auto [i, arg] : llvm::enumerate(producerBody.getArguments()))
    mapping.map(arg, body->getArgument(i));
  for (Operation &op : producerBody.without_terminator())
    rewriter.clone(op, mapping);
  Value produced = mapping.lookup(cast<YieldOp>(producerBody.getTerminator()).getValues()[0]);

  Block &consumerBody = consumer.getBody().front();
  unsigned next = producer.getInputs().size();
  for (auto [i, arg] : llvm::enumerate(consumerBody.getArguments()))
    mapping.map(arg, i == c.input ? produced : body->getArgument(next++));
  for (Operation &op : consumerBody)
    rewriter.clone(op, mapping);

  rewriter.eraseOp(consumer);
  rewriter.eraseOp(producer);
}

struct SpyreFuseElementwisePass
    : mlir::spyre::impl::SpyreFuseElementwiseBase<SpyreFuseElementwisePass> {
  using SpyreFuseElementwiseBase::SpyreFuseElementwiseBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Fusing may make the fused op a producer again: iterate to a fixed point.
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<GenericOp> producers;
      getOperation().walk([&](GenericOp g) { producers.push_back(g); });
      for (GenericOp producer : producers) {
        Candidate c = analyse(producer);
        if (!c.consumer)
          continue;
        fuse(producer, c, rewriter);
        changed = true;
        break; // the walk's list is stale now
      }
    }
    if (!reportMissed)
      return;
    getOperation().walk([&](GenericOp producer) {
      Value temp = producer.getOutputs().front();
      if (!temp.getDefiningOp<AllocOp>())
        return;
      Candidate c = analyse(producer);
      if (!c.consumer)
        producer.emitRemark() << "not fused: " << c.whyNot;
    });
  }
};

} // namespace
