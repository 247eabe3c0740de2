//===- Arch.cpp - load the architecture description -----------------------===//

#include "Arch/Arch.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

namespace spyre {
namespace {

/// Reads required keys and collects the first error.
class Reader {
public:
  Reader(const toml::table &root, std::string_view source)
      : root(root), source(source) {}

  template <typename T> void get(const char *path, T &out, bool positive = true) {
    if (!error.empty())
      return;
    toml::node_view<const toml::node> node = root.at_path(path);
    std::optional<T> value;
    if constexpr (std::is_floating_point_v<T>)
      value = node.value<double>();
    else
      value = node.value<int64_t>();
    if (!value) {
      fail(path, node ? "has the wrong type" : "is missing");
      return;
    }
    if (positive && *value <= 0) {
      fail(path, "must be positive");
      return;
    }
    out = *value;
  }

  void getString(const char *path, std::string &out) {
    if (!error.empty())
      return;
    std::optional<std::string> value = root.at_path(path).value<std::string>();
    if (!value)
      return fail(path, "is missing or not a string");
    out = *value;
  }

  void fail(std::string_view path, std::string_view what) {
    if (error.empty())
      error = std::string(source) + ": key '" + std::string(path) + "' " +
              std::string(what);
  }

  std::string error;

private:
  const toml::table &root;
  std::string_view source;
};

} // namespace

std::optional<Arch> Arch::parse(std::string_view text,
                                std::string_view sourceName,
                                std::string &error) {
  toml::parse_result parsed = toml::parse(text, sourceName);
  if (!parsed) {
    std::ostringstream os;
    os << parsed.error();
    error = os.str();
    return std::nullopt;
  }
  const toml::table &root = parsed.table();
  Reader r(root, sourceName);
  Arch a;
  r.getString("name", a.name);
  r.get("card.cores", a.cores);
  r.get("card.clock_hz", a.clockHz);
  r.get("core.corelets", a.corelets);
  r.get("core.pt_rows", a.ptRows);
  r.get("core.pt_cols", a.ptCols);
  r.get("core.pt_lanes", a.ptLanes);
  r.get("core.pt_startup_cycles", a.ptStartupCycles, /*positive=*/false);
  r.get("core.int8_rate_multiplier", a.int8RateMultiplier);
  r.get("core.sfu_lanes", a.sfuLanes);
  r.get("core.sfu_fp32_rate_divisor", a.sfuFp32RateDivisor);
  r.get("core.sfu_transcendental_divisor", a.sfuTranscendentalDivisor);
  r.get("core.sfu_startup_cycles", a.sfuStartupCycles, /*positive=*/false);
  r.get("core.engine_queue_depth", a.engineQueueDepth);
  r.get("lx.bytes", a.lxBytes);
  r.get("lx.reserved_bytes", a.lxReservedBytes, /*positive=*/false);
  r.get("memory.stick_bytes", a.stickBytes);
  r.get("memory.device_bytes", a.deviceBytes);
  r.get("memory.usable_device_bytes", a.usableDeviceBytes);
  r.get("memory.bandwidth_bytes_per_s", a.bandwidthBytesPerS);
  r.get("memory.dma_port_bytes_per_cycle", a.dmaPortBytesPerCycle);
  r.get("memory.dma_latency_cycles", a.dmaLatencyCycles, /*positive=*/false);
  r.get("memory.per_core_span_bytes", a.perCoreSpanBytes);
  r.get("ring.bytes_per_cycle", a.ringBytesPerCycle);
  r.get("ring.hop_latency_cycles", a.ringHopLatencyCycles, /*positive=*/false);
  r.get("numerics.dlfloat16_exponent_bits", a.dlfloat16ExponentBits);
  r.get("numerics.dlfloat16_fraction_bits", a.dlfloat16FractionBits);
  if (r.error.empty() && a.lxReservedBytes >= a.lxBytes)
    r.fail("lx.reserved_bytes", "leaves no usable LX");
  if (r.error.empty() && a.lxBytes % a.stickBytes != 0)
    r.fail("lx.bytes", "must be a whole number of sticks");
  if (r.error.empty() &&
      a.dlfloat16ExponentBits + a.dlfloat16FractionBits != 15)
    r.fail("numerics.dlfloat16_fraction_bits",
           "plus the exponent bits must be 15 (a 16-bit format)");
  if (!r.error.empty()) {
    error = r.error;
    return std::nullopt;
  }
  return a;
}

std::optional<Arch> Arch::load(const std::string &path, std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read architecture description '" + path + "'";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path, error);
}

uint64_t Arch::fingerprint() const {
  // FNV-1a over the parameters' decimal text: stable across hosts.
  std::ostringstream os;
  os << name << ' ' << cores << ' ' << clockHz << ' ' << corelets << ' '
     << ptRows << ' ' << ptCols << ' ' << ptLanes << ' ' << ptStartupCycles
     << ' ' << int8RateMultiplier << ' ' << sfuLanes << ' '
     << sfuFp32RateDivisor << ' ' << sfuTranscendentalDivisor << ' '
     << sfuStartupCycles << ' ' << engineQueueDepth << ' ' << lxBytes << ' '
     << lxReservedBytes << ' ' << stickBytes << ' ' << deviceBytes << ' '
     << usableDeviceBytes << ' ' << bandwidthBytesPerS << ' '
     << dmaPortBytesPerCycle << ' ' << dmaLatencyCycles << ' '
     << perCoreSpanBytes << ' ' << ringBytesPerCycle << ' '
     << ringHopLatencyCycles << ' ' << dlfloat16ExponentBits << ' '
     << dlfloat16FractionBits;
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : os.str()) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string Arch::defaultPath() {
  if (const char *env = std::getenv("SPYRE_ARCH"); env && *env)
    return env;
#ifdef SPYRE_DEFAULT_ARCH_PATH
  return SPYRE_DEFAULT_ARCH_PATH;
#else
  return "spyre_card.toml";
#endif
}

} // namespace spyre
