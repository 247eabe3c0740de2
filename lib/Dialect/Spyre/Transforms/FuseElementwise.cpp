//===- FuseElementwise.cpp - inline elementwise producers into consumers ---===//
//
// A fused pair computes every element of the consumer from the same values
// as before, so results are unchanged; what disappears is the temporary's
// write and read through device memory.
//
// A producer that loads nothing (an iota, a constant, a little index
// arithmetic: the positions and masks Inductor realizes) is recomputed in
// every reader, whatever their domains: its few ops per element cost less
// than the kernel phase that writes the temporary, and the barrier and load
// after it (about a microsecond each on the card).
//
// So is a small producer whose every reader loads one value of it per row
// (a LayerNorm's mean, the row sums divided by the row length, read by the
// variance and the normalization): in the reader its ops take values
// constant along the row, which the vector unit computes once per row, and
// the readers then share the rows' loop with the reduction before them, so
// that spyre-fuse-rows can keep the rows in LX for all of them instead of
// loading them again after the producer's phase.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

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

/// Ops a producer without inputs may have (constants aside) to be
/// recomputed by its readers: an index, a comparison or two.
constexpr unsigned kMaxRecomputedOps = 4;

/// A reader of a temporary: the generic and the input that loads it.
struct Read {
  GenericOp reader;
  unsigned input;
};

/// Whether every generic reading `producer`'s output loads it through a map
/// that leaves out the reader's innermost loop: one value per row.
bool readOncePerRow(GenericOp producer) {
  Value temp = producer.getOutputs().front();
  bool any = false;
  for (Operation *user : temp.getUsers()) {
    if (user == producer || isa<DeallocOp>(user))
      continue;
    auto reader = dyn_cast<GenericOp>(user);
    if (!reader)
      return false;
    for (auto [i, input] : llvm::enumerate(reader.getInputs())) {
      if (input != temp)
        continue;
      AffineMap map = reader.getInputMap(unsigned(i));
      if (map.getNumDims() < 2 || map.isFunctionOfDim(map.getNumDims() - 1))
        return false;
      any = true;
    }
  }
  return any;
}

/// The size of the loop a reduction summed over, if `temp` holds one value
/// per row of it: the reduction's output itself, or an elementwise value of
/// such outputs (a LayerNorm's mean, its sum divided by the row length).
std::optional<int64_t> perRowOfReduction(Value temp, unsigned depth = 0) {
  if (!temp.getDefiningOp<AllocOp>() || depth > 2)
    return std::nullopt;
  GenericOp writer;
  for (Operation *user : temp.getUsers())
    if (auto generic = dyn_cast<GenericOp>(user);
        generic && llvm::is_contained(generic.getOutputs(), temp)) {
      if (writer)
        return std::nullopt;
      writer = generic;
    }
  if (!writer || !writer.getSymbols().empty())
    return std::nullopt;
  SmallVector<unsigned> reduced = writer.getReductionLoops();
  if (reduced.size() == 1)
    return writer.getStaticDomain()[reduced.front()];
  if (!reduced.empty())
    return std::nullopt;
  std::optional<int64_t> size;
  for (Value input : writer.getInputs()) {
    std::optional<int64_t> inner = perRowOfReduction(input, depth + 1);
    if (!inner || (size && *size != *inner))
      return std::nullopt;
    size = inner;
  }
  return size;
}

/// Puts last the one loop of an elementwise `reader` along which its values
/// per row of a reduction do not change, when its innermost loop is another:
/// Inductor iterates a LayerNorm's normalization over its output's order,
/// which for a channel-first image ([channels, positions], the statistics
/// per position) leaves the reduced channels first. Turned to the
/// reduction's [positions, channels], the statistics are values per row
/// again, which the reader recomputes (see readOncePerRow) and which let
/// spyre-fuse-rows keep the rows in LX for the statistics and the
/// normalization. Every loop is parallel: only the order changes.
void orientLikeReduction(GenericOp reader) {
  ArrayRef<int64_t> sizes = reader.getStaticDomain();
  unsigned n = unsigned(sizes.size());
  if (n < 2 || !reader.getReductionLoops().empty() || !reader.getSymbols().empty() ||
      !reader.getDomainSizes().empty() ||
      !reader.getBody().front().getOps<IndexExprOp>().empty())
    return;
  llvm::SmallBitVector used(n);
  std::optional<int64_t> reducedSize;
  for (auto [i, input] : llvm::enumerate(reader.getInputs())) {
    std::optional<int64_t> size = perRowOfReduction(input);
    if (!size || (reducedSize && *reducedSize != *size))
      continue;
    reducedSize = size;
    AffineMap map = reader.getInputMap(unsigned(i));
    for (unsigned d = 0; d < n; ++d)
      if (map.isFunctionOfDim(d))
        used.set(d);
  }
  if (!reducedSize || !used.test(n - 1))
    return;
  SmallVector<unsigned> free;
  for (unsigned d = 0; d < n; ++d)
    if (!used.test(d) && sizes[d] > 1)
      free.push_back(d);
  if (free.size() != 1 || sizes[free.front()] != *reducedSize)
    return;
  // The others in their order, then the free one.
  SmallVector<unsigned> order;
  for (unsigned d = 0; d < n; ++d)
    if (d != free.front())
      order.push_back(d);
  order.push_back(free.front());
  reader.permuteLoops(order);
}

/// Why the readers of a producer that loads `inputs` cannot load them where
/// it did: an op from the producer up to the last reader writes one of them.
std::string whyInputsChange(GenericOp producer, ArrayRef<Read> reads) {
  Operation *last = producer;
  for (const Read &read : reads)
    if (last->isBeforeInBlock(read.reader))
      last = read.reader;
  auto inputs = producer.getInputs();
  for (Operation *op = producer->getNextNode(); op; op = op->getNextNode()) {
    if (auto generic = dyn_cast<GenericOp>(op)) {
      for (Value out : generic.getOutputs())
        if (llvm::is_contained(inputs, out))
          return "a later op writes what it loads before a reader loads it";
    } else if (!isa<AllocOp, DimOp, DeallocOp>(op) && !isMemoryEffectFree(op)) {
      return "another op runs between it and a reader";
    }
    if (op == last)
      break;
  }
  return "";
}

/// Why `producer` cannot be recomputed by the readers of its output, or
/// (nothing, and) those readers in `reads`. A producer that loads inputs
/// comes here only when readOncePerRow holds.
std::string whyNotRecomputed(GenericOp producer, SmallVectorImpl<Read> &reads) {
  if (producer.getOutputs().size() != 1 || producer.getCombiners() ||
      !producer.getReductionLoops().empty() || !producer.getSymbols().empty())
    return "it has several outputs, reductions or symbols";
  bool loads = !producer.getInputs().empty();
  Value temp = producer.getOutputs().front();
  Block &body = producer.getBody().front();
  // A constant in a one-element temporary (Inductor's domain [1], written
  // at (0)) reads the same wherever it is loaded.
  bool constant = body.getOps<IndexExprOp>().empty() &&
                  cast<BufferType>(temp.getType()).getNumElements() == 1 &&
                  llvm::all_of(producer.getStaticDomain(), [](int64_t n) { return n == 1; });
  if (!temp.getDefiningOp<AllocOp>() || (!constant && !producer.getOutputMap(0).isPermutation()))
    return "it does not write each element of a temporary once";
  if (llvm::count_if(body.without_terminator(), [](Operation &op) {
        return !isa<arith::ConstantOp>(op);
      }) > kMaxRecomputedOps)
    return "it computes too much to repeat per element";
  // (A reader loading the temporary twice is one user.)
  for (Operation *user : llvm::SetVector<Operation *>(llvm::from_range, temp.getUsers())) {
    if (user == producer || isa<DeallocOp>(user))
      continue;
    auto reader = dyn_cast<GenericOp>(user);
    if (!reader || reader->getBlock() != producer->getBlock() ||
        !producer->isBeforeInBlock(reader) || !reader.getSymbols().empty() ||
        llvm::is_contained(reader.getOutputs(), temp))
      return "the temporary has a user that is not a later generic reading it";
    for (auto [i, input] : llvm::enumerate(reader.getInputs()))
      if (input == temp)
        reads.push_back({reader, unsigned(i)});
  }
  if (reads.empty())
    return "the temporary is never read";
  return loads ? whyInputsChange(producer, reads) : "";
}

/// Each read of `producer`'s temporary becomes the producer's body in the
/// reader, its index_exprs and its inputs' maps taken through the map the
/// reader loaded with; the producer's inputs become the reader's.
void recompute(GenericOp producer, ArrayRef<Read> reads, RewriterBase &rewriter) {
  Block &producerBody = producer.getBody().front();
  Value yielded = cast<YieldOp>(producerBody.getTerminator()).getValues()[0];
  // (Null for a one-element value, whose every load is its point 0.)
  AffineMap toProducer = inversePermutation(producer.getOutputMap(0));
  // Later inputs first, so that erasing one keeps the others' numbers.
  SmallVector<Read> ordered(reads);
  llvm::sort(ordered, [](const Read &a, const Read &b) {
    return a.reader == b.reader ? a.input > b.input
                                : a.reader->isBeforeInBlock(b.reader);
  });
  for (const Read &read : ordered) {
    GenericOp reader = read.reader;
    Block &body = reader.getBody().front();
    // The producer's point each element of the reader loaded: point 0 of
    // a one-element value, whose inputs (log of a 0-d tensor) are read
    // there too.
    AffineMap readMap = reader.getInputMap(read.input);
    AffineMap loaded =
        toProducer ? toProducer.compose(readMap)
                   : AffineMap::get(readMap.getNumDims(), 0,
                                    SmallVector<AffineExpr>(producer.getStaticDomain().size(),
                                                            rewriter.getAffineConstantExpr(0)),
                                    rewriter.getContext());
    rewriter.setInsertionPointToStart(&body);
    IRMapping mapping;
    SmallVector<Attribute> withInputs(reader.getIndexingMaps().getValue());
    unsigned inputs = reader.getInputs().size();
    for (auto [i, input] : llvm::enumerate(producer.getInputs())) {
      withInputs.insert(withInputs.begin() + inputs + i,
                        AffineMapAttr::get(producer.getInputMap(unsigned(i)).compose(loaded)));
      mapping.map(producerBody.getArgument(unsigned(i)),
                  body.addArgument(producerBody.getArgument(unsigned(i)).getType(),
                                   reader.getLoc()));
    }
    rewriter.modifyOpInPlace(reader, [&] {
      reader.getInputsMutable().append(producer.getInputs());
      reader.setIndexingMapsAttr(rewriter.getArrayAttr(withInputs));
    });
    for (Operation &op : producerBody.without_terminator()) {
      Operation *clone = rewriter.clone(op, mapping);
      if (auto expr = dyn_cast<IndexExprOp>(clone))
        expr.setMapAttr(AffineMapAttr::get(expr.getMap().compose(loaded)));
    }
    rewriter.replaceAllUsesWith(body.getArgument(read.input), mapping.lookupOrDefault(yielded));
    rewriter.modifyOpInPlace(reader, [&] {
      SmallVector<Attribute> maps(reader.getIndexingMaps().getValue());
      maps.erase(maps.begin() + read.input);
      body.eraseArgument(read.input);
      reader.getInputsMutable().erase(read.input);
      reader.setIndexingMapsAttr(rewriter.getArrayAttr(maps));
    });
  }
  Value temp = producer.getOutputs().front();
  rewriter.eraseOp(producer);
  for (Operation *user : llvm::make_early_inc_range(temp.getUsers()))
    rewriter.eraseOp(user); // its deallocations
  rewriter.eraseOp(temp.getDefiningOp());
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
    getOperation().walk([&](GenericOp g) { orientLikeReduction(g); });
    // Producers that load nothing, and those read once per row.
    SmallVector<GenericOp> recomputable;
    getOperation().walk([&](GenericOp g) {
      if (g.getInputs().empty() || (g.getOutputs().size() == 1 && readOncePerRow(g)))
        recomputable.push_back(g);
    });
    for (GenericOp producer : recomputable) {
      SmallVector<Read> reads;
      std::string why = whyNotRecomputed(producer, reads);
      if (why.empty())
        recompute(producer, reads, rewriter);
      else if (reportMissed && producer.getOutputs().front().getDefiningOp<AllocOp>())
        producer.emitRemark() << "not recomputed by its readers: " << why;
    }
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
