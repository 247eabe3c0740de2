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

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spyre {

struct Arch {
  std::string name;
  // [card]
  int64_t cores = 0;
  double clockHz = 0;
  // [core]
  int64_t corelets = 0, ptRows = 0, ptCols = 0, ptLanes = 0;
  int64_t ptStartupCycles = 0, int8RateMultiplier = 0;
  int64_t sfuLanes = 0, sfuFp32RateDivisor = 0, sfuTranscendentalDivisor = 0;
  int64_t sfuStartupCycles = 0, engineQueueDepth = 0;
  // [lx]
  int64_t lxBytes = 0, lxReservedBytes = 0;
  // [memory]
  int64_t stickBytes = 0, deviceBytes = 0, usableDeviceBytes = 0;
  double bandwidthBytesPerS = 0;
  int64_t dmaPortBytesPerCycle = 0, dmaLatencyCycles = 0, perCoreSpanBytes = 0;
  // [ring]
  int64_t ringBytesPerCycle = 0, ringHopLatencyCycles = 0;
  // [numerics]
  int64_t dlfloat16ExponentBits = 0, dlfloat16FractionBits = 0;

  /// fp16 multiply-accumulates per cycle of one core's matrix units.
  int64_t macsPerCycle() const { return corelets * ptRows * ptCols * ptLanes; }
  /// 16-bit vector elements per cycle of one core's SFUs.
  int64_t sfuElementsPerCycle() const { return corelets * sfuLanes; }
  /// Device-memory bytes per cycle for the whole card.
  double deviceBytesPerCycle() const { return bandwidthBytesPerS / clockHz; }
  /// LX bytes a program may use on each core.
  int64_t lxUsableBytes() const { return lxBytes - lxReservedBytes; }
  /// Card peak in FLOP/s (a MAC is two FLOPs).
  double peakFlops() const { return 2.0 * macsPerCycle() * cores * clockHz; }

  /// A hash of every parameter; binaries record the one they were built for.
  uint64_t fingerprint() const;

  /// Parses the TOML text of an architecture description. On failure returns
  /// nothing and sets `error` to a message naming the file and the key.
  static std::optional<Arch> parse(std::string_view text,
                                   std::string_view sourceName,
                                   std::string &error);
  static std::optional<Arch> load(const std::string &path, std::string &error);

  /// $SPYRE_ARCH if set; else the description installed beside the running
  /// tool (spyre_mlir/bin/../arch); else the source tree's.
  static std::string defaultPath();
};

} // namespace spyre

#endif // SPYRE_ARCH_ARCH_H
