//===- Arch.h - the architecture description of the card ------*- C++ -*-===//
//
// The one description of the modelled card (lib/Arch/spyre_card.toml), read
// by the simulator, the passes and the cost model. No other code holds a
// hardware number. This header depends on the C++ standard library only and
// does not throw, so that MLIR code (built without exceptions) can use it.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_ARCH_ARCH_H
#define SPYRE_ARCH_ARCH_H

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre {

struct Arch {
  std::string name;
  // [card]
  int64_t cores = 0;
  double clockHz = 0;
  // [core]
  int64_t corelets = 0, ptRows = 0, ptCols = 0, ptLanes = 0;
  int64_t ptStartupCycles = 0, int8RateMultiplier = 0;
  double ptFeedBytesPerCycle = 0;
  double sfuElementwisePerCycle = 0, sfuReducePerCycle = 0, sfuLxBytesPerCycle = 0;
  int64_t sfuTranscendentalDivisor = 0;
  int64_t sfuStartupCycles = 0, engineQueueDepth = 0;
  // [lx]
  int64_t lxBytes = 0, lxReservedBytes = 0;
  // [memory]
  int64_t stickBytes = 0, deviceBytes = 0, usableDeviceBytes = 0;
  double bandwidthBytesPerS = 0, turnaroundSPerByte = 0;
  int64_t dmaPortBytesPerCycle = 0, dmaLatencyCycles = 0, perCoreSpanBytes = 0;
  int64_t dmaDuplex = 0; // 1: a core's DMA engine moves a load beside a store
  int64_t portCores = 0;    // cores that reach device memory through one port
  double portBytesPerS = 0; // one memory port, one direction
  // [ring]
  int64_t ringBytesPerCycle = 0, ringHopLatencyCycles = 0;
  // [link]: card to card, for collectives across cards
  double linkBandwidthBytesPerS = 0, linkLatencyS = 0;
  // [numerics]
  int64_t dlfloat16ExponentBits = 0, dlfloat16FractionBits = 0;

  /// fp16 multiply-accumulates per cycle of one core's matrix units.
  int64_t macsPerCycle() const { return corelets * ptRows * ptCols * ptLanes; }
  /// Elements per cycle of one core's SFUs on an instruction that streams
  /// `lxBytesPerElement` bytes through LX per element (its operands read and
  /// written per element; a per-row value does not count): the op class's
  /// rate (reduction or elementwise, transcendental functions at a
  /// fraction) unless the SFUs' LX port caps it. The port is why fp32 runs
  /// at half the fp16 rate (an fp32 add streams 12 bytes an element, an
  /// fp16 add 6) while a widening op, fp16 in and fp32 out, does not.
  double sfuRate(double lxBytesPerElement, bool reduction, bool transcendental) const {
    double rate = reduction ? sfuReducePerCycle : sfuElementwisePerCycle;
    if (transcendental)
      rate /= double(sfuTranscendentalDivisor);
    if (lxBytesPerElement > 0 && sfuLxBytesPerCycle / lxBytesPerElement < rate)
      rate = sfuLxBytesPerCycle / lxBytesPerElement;
    return rate;
  }
  /// Cycles of one SFU instruction over `elements` (see sfuRate), with its
  /// pipeline startup. The simulator and the planners both use this.
  double sfuCycles(double elements, double lxBytesPerElement, bool reduction,
                   bool transcendental) const {
    return std::ceil(elements / sfuRate(lxBytesPerElement, reduction, transcendental)) +
           double(sfuStartupCycles);
  }
  /// Device-memory bytes per cycle for the whole card, one direction.
  double deviceBytesPerCycle() const { return bandwidthBytesPerS / clockHz; }
  /// The card's cores reach device memory through memoryPorts() ports,
  /// core `c` through port `c / portCores` (a program on fewer cores than
  /// the card uses the first ones), each carrying at most
  /// portBytesPerCycle() each way.
  int64_t memoryPorts() const { return memoryPorts(cores); }
  /// The ports a program on its first `programCores` cores reaches.
  int64_t memoryPorts(int64_t programCores) const {
    return (programCores + portCores - 1) / portCores;
  }
  int64_t memoryPortOf(int64_t core) const { return core / portCores; }
  double portBytesPerCycle() const { return portBytesPerS / clockHz; }
  /// Extra bus cycles per byte of min(read, write) traffic (turnaround).
  double turnaroundCyclesPerByte() const { return turnaroundSPerByte * clockHz; }
  /// Device-memory bytes per cycle the card's cores can move one way: the
  /// bus, unless their memory ports carry less (a description of 16 cores
  /// or fewer has one port).
  double memoryBytesPerCycle() const {
    double ports = double(memoryPorts()) * portBytesPerCycle();
    return ports < deviceBytesPerCycle() ? ports : deviceBytesPerCycle();
  }
  /// Cycles device memory needs for `read` and `write` bytes moved
  /// together, on the bus and through the ports: the compulsory-traffic
  /// bound of a kernel.
  double deviceCycles(double read, double write) const {
    double bus = (read + write) / deviceBytesPerCycle() +
                 (read < write ? read : write) * turnaroundCyclesPerByte();
    double ports = (read > write ? read : write) / (double(memoryPorts()) * portBytesPerCycle());
    return bus > ports ? bus : ports;
  }
  /// LX bytes a program may use on each core.
  int64_t lxUsableBytes() const { return lxBytes - lxReservedBytes; }
  /// Card peak in FLOP/s (a MAC is two FLOPs).
  double peakFlops() const { return 2.0 * macsPerCycle() * cores * clockHz; }

  /// Cycles of one matmul instruction of m x k x n on a core's PT: the
  /// array's peak rate unless its operands (A and B, `abBytes`, and the
  /// accumulator read and written, `accBytes`) cannot be streamed from LX
  /// fast enough, plus one pipeline fill and drain. The simulator and the
  /// matmul planner both use this.
  double ptCycles(double m, double k, double n, double abBytes, double accBytes) const {
    double compute = m * k * n / double(macsPerCycle());
    double feed = (abBytes + accBytes) / ptFeedBytesPerCycle;
    double busy = compute > feed ? compute : feed;
    double whole = double(int64_t(busy));
    return (whole < busy ? whole + 1 : whole) + double(ptStartupCycles);
  }

  /// A hash of every parameter; binaries record the one they were built for.
  uint64_t fingerprint() const;

  /// One numeric parameter by its TOML key ("card.cores"); integers are
  /// exact in `integer`, the others in `real`.
  struct Parameter {
    const char *key;
    bool isInteger;
    int64_t integer;
    double real;
  };
  /// Every numeric parameter, in the description's order: what the compiler
  /// attaches to the IR (the `spyre.arch` module attribute).
  std::vector<Parameter> parameters() const;

  /// Parses the TOML text of an architecture description. On failure returns
  /// nothing and sets `error` to a message naming the file and the key.
  static std::optional<Arch> parse(std::string_view text,
                                   std::string_view sourceName,
                                   std::string &error);
  static std::optional<Arch> load(const std::string &path, std::string &error);
  /// The description from a name and parameters() as given by `get`, which
  /// fills in the parameter of `key` or returns false if it has none; checked
  /// as parse() checks a file.
  static std::optional<Arch>
  fromParameters(std::string name,
                 const std::function<bool(const char *key, Parameter &)> &get,
                 std::string_view sourceName, std::string &error);

  /// The one lookup of the description's file: `explicitPath` if not empty,
  /// else $SPYRE_ARCH if set, else the description installed with the code
  /// that calls this (spyre_mlir/arch/spyre_card.toml beside the package's
  /// tools, C API library and simulator module; <build>/arch/ for a build
  /// tree). Never the source checkout: an installed compiler must not change
  /// when the checkout does.
  static std::string lookupPath(std::string_view explicitPath = {});
};

} // namespace spyre

#endif // SPYRE_ARCH_ARCH_H
