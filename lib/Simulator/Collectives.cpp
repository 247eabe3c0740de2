//===- Collectives.cpp - time of a collective across several cards --------===//

#include "spyre-mlir/Simulator/Collectives.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace spyre {

namespace {

/// `messages` sequential messages moving `bytes` in all over one link.
CollectiveTime over(const char *algorithm, int64_t messages, double bytes, const Arch &arch) {
  double latency = arch.linkLatencyS * arch.clockHz;
  double perByte = arch.clockHz / arch.linkBandwidthBytesPerS;
  return {double(messages) * latency + bytes * perByte, algorithm, messages};
}

const CollectiveTime &faster(const CollectiveTime &a, const CollectiveTime &b) {
  return b.cycles < a.cycles ? b : a;
}

} // namespace

CollectiveTime collectiveTime(const Arch &arch, Collective kind, double bytes, int64_t cards) {
  if (cards < 1)
    throw std::invalid_argument("a collective needs at least one card");
  if (bytes < 0)
    throw std::invalid_argument("a collective cannot move a negative number of bytes");
  if (cards == 1)
    return {0, "none", 0};
  int64_t p = cards;
  int64_t rounds = int64_t(std::ceil(std::log2(double(p))));
  // Recursive doubling and halving pair cards up: with a count that is not
  // a power of two, the extra cards first fold into the others and get the
  // result back at the end, two more steps.
  bool powerOfTwo = (p & (p - 1)) == 0;
  int64_t pairedRounds = powerOfTwo ? rounds : int64_t(std::floor(std::log2(double(p)))) + 2;
  double share = bytes / double(p); // one card's chunk
  switch (kind) {
  case Collective::AllReduce:
    // Ring: reduce-scatter then all-gather, 2 (p - 1) chunk messages; every
    // link busy with one chunk at a time. Recursive doubling: log2 p rounds
    // exchanging the whole tensor, for messages too small to split.
    return faster(over("ring", 2 * (p - 1), 2.0 * double(p - 1) * share, arch),
                  over("recursive doubling", pairedRounds, double(pairedRounds) * bytes, arch));
  case Collective::AllGather:
  case Collective::ReduceScatter:
    // Each card receives (or sends) the p - 1 chunks it lacks either way.
    // Bruck's all-gather needs ceil(log2 p) steps for any p; recursive
    // halving, like doubling, two more when p is not a power of two (their
    // latency; the folded cards' extra bytes are not counted).
    return faster(over("ring", p - 1, double(p - 1) * share, arch),
                  kind == Collective::AllGather
                      ? over("Bruck", rounds, double(p - 1) * share, arch)
                      : over("recursive halving", pairedRounds, double(p - 1) * share, arch));
  case Collective::Broadcast:
    // Binomial tree for small tensors; scatter then all-gather for large.
    return faster(over("tree", rounds, double(rounds) * bytes, arch),
                  over("scatter + all-gather", 2 * rounds, 2.0 * double(p - 1) * share, arch));
  case Collective::AllToAll:
    return over("pairwise", p - 1, double(p - 1) * share, arch);
  case Collective::Barrier:
    return over("dissemination", rounds, 0, arch);
  }
  throw std::invalid_argument("unknown collective");
}

} // namespace spyre
