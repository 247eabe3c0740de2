//===- Arch.cpp - load the architecture description -----------------------===//

#include "Arch/Arch.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <variant>
#include <vector>

#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

namespace spyre {
namespace {

/// Every numeric parameter: its TOML key, where it goes, and whether it
/// must be positive. One list serves parsing and the fingerprint.
struct Field {
  const char *key;
  std::variant<int64_t Arch::*, double Arch::*> member;
  bool positive = true;
};

const Field kFields[] = {
    {"card.cores", &Arch::cores},
    {"card.clock_hz", &Arch::clockHz},
    {"core.corelets", &Arch::corelets},
    {"core.pt_rows", &Arch::ptRows},
    {"core.pt_cols", &Arch::ptCols},
    {"core.pt_lanes", &Arch::ptLanes},
    {"core.pt_startup_cycles", &Arch::ptStartupCycles, false},
    {"core.int8_rate_multiplier", &Arch::int8RateMultiplier},
    {"core.pt_feed_bytes_per_cycle", &Arch::ptFeedBytesPerCycle},
    {"core.sfu_elementwise_per_cycle", &Arch::sfuElementwisePerCycle},
    {"core.sfu_reduce_per_cycle", &Arch::sfuReducePerCycle},
    {"core.sfu_fp32_rate_divisor", &Arch::sfuFp32RateDivisor},
    {"core.sfu_transcendental_divisor", &Arch::sfuTranscendentalDivisor},
    {"core.sfu_startup_cycles", &Arch::sfuStartupCycles, false},
    {"core.engine_queue_depth", &Arch::engineQueueDepth},
    {"lx.bytes", &Arch::lxBytes},
    {"lx.reserved_bytes", &Arch::lxReservedBytes, false},
    {"memory.stick_bytes", &Arch::stickBytes},
    {"memory.device_bytes", &Arch::deviceBytes},
    {"memory.usable_device_bytes", &Arch::usableDeviceBytes},
    {"memory.bandwidth_bytes_per_s", &Arch::bandwidthBytesPerS},
    {"memory.turnaround_s_per_byte", &Arch::turnaroundSPerByte, false},
    {"memory.dma_port_bytes_per_cycle", &Arch::dmaPortBytesPerCycle},
    {"memory.dma_latency_cycles", &Arch::dmaLatencyCycles, false},
    {"memory.per_core_span_bytes", &Arch::perCoreSpanBytes},
    {"ring.bytes_per_cycle", &Arch::ringBytesPerCycle},
    {"ring.hop_latency_cycles", &Arch::ringHopLatencyCycles, false},
    {"numerics.dlfloat16_exponent_bits", &Arch::dlfloat16ExponentBits},
    {"numerics.dlfloat16_fraction_bits", &Arch::dlfloat16FractionBits},
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
  auto fail = [&](std::string_view key, std::string_view what) {
    error = std::string(sourceName) + ": key '" + std::string(key) + "' " + std::string(what);
    return std::nullopt;
  };
  Arch a;
  std::optional<std::string> name = root.at_path("name").value<std::string>();
  if (!name)
    return fail("name", "is missing or not a string");
  a.name = *name;
  for (const Field &f : kFields) {
    toml::node_view<const toml::node> node = root.at_path(f.key);
    double value;
    if (auto *member = std::get_if<double Arch::*>(&f.member)) {
      std::optional<double> v = node.value<double>();
      if (!v)
        return fail(f.key, node ? "has the wrong type" : "is missing");
      value = a.*(*member) = *v;
    } else {
      std::optional<int64_t> v = node.value<int64_t>();
      if (!v || !node.is_integer())
        return fail(f.key, node ? "has the wrong type" : "is missing");
      value = static_cast<double>(a.*std::get<int64_t Arch::*>(f.member) = *v);
    }
    if (value < 0 || (f.positive && value == 0))
      return fail(f.key, f.positive ? "must be positive" : "must not be negative");
  }
  if (a.lxReservedBytes >= a.lxBytes)
    return fail("lx.reserved_bytes", "leaves no usable LX");
  if (a.lxBytes % a.stickBytes != 0)
    return fail("lx.bytes", "must be a whole number of sticks");
  if (a.dlfloat16ExponentBits + a.dlfloat16FractionBits != 15)
    return fail("numerics.dlfloat16_fraction_bits",
                "plus the exponent bits must be 15 (a 16-bit format)");
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
  os << name;
  for (const Field &f : kFields) {
    if (auto *member = std::get_if<double Arch::*>(&f.member))
      os << ' ' << this->*(*member);
    else
      os << ' ' << this->*std::get<int64_t Arch::*>(f.member);
  }
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
  // Installed tools live in spyre_mlir/bin, the description in spyre_mlir/arch.
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path installed = exe.parent_path().parent_path() / "arch" / "spyre_card.toml";
    if (std::filesystem::exists(installed, ec))
      return installed.string();
  }
#ifdef SPYRE_DEFAULT_ARCH_PATH
  return SPYRE_DEFAULT_ARCH_PATH; // the source tree's, for build-tree tools
#else
  return "spyre_card.toml";
#endif
}

} // namespace spyre
