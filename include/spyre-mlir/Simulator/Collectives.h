//===- Collectives.h - time of a collective across several cards -*- C++ -*-===//
//
// The time model of collectives between cards (spyre_mlir.distributed moves
// the data; this says how long the cards' link would take). Each card has one
// link to a non-blocking switch, usable in both directions at once, with the
// bandwidth and per-message latency of the description's [link] section. Like
// a collective library, the model takes the faster of a ring and a
// logarithmic algorithm for the message size, so small decode messages pay
// log2(cards) latencies, not 2 (cards - 1).
//
// The reduction of all-reduce and reduce-scatter runs on the cards' SFUs as
// chunks arrive; at the SFUs' rate it is an order of magnitude faster than the
// link and hides behind the transfers, so it is not added.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_SIMULATOR_COLLECTIVES_H
#define SPYRE_SIMULATOR_COLLECTIVES_H

#include "spyre-mlir/Arch/Arch.h"

#include <cstdint>

namespace spyre {

enum class Collective { AllReduce, AllGather, ReduceScatter, Broadcast, AllToAll, Barrier };

struct CollectiveTime {
  double cycles = 0;            ///< of the card's clock, from the last card's start
  const char *algorithm = "";   ///< "ring", "recursive doubling", "tree", ...
  int64_t messages = 0;         ///< sequential messages on the critical path
};

/// Time of `kind` over `cards` cards. `bytes` is the whole tensor: the one
/// reduced (all-reduce), gathered into (all-gather, its output), scattered
/// from (reduce-scatter, its input), broadcast, or that each card sends to
/// all others (all-to-all). Zero for one card.
CollectiveTime collectiveTime(const Arch &arch, Collective kind, double bytes, int64_t cards);

} // namespace spyre

#endif // SPYRE_SIMULATOR_COLLECTIVES_H
