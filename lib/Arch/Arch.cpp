//===- Arch.cpp - load the architecture description -----------------------===//

#include "spyre-mlir/Arch/Arch.h"

#include <cstdlib>
#include <dlfcn.h>
#include <link.h>
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
    {"core.sfu_lx_bytes_per_cycle", &Arch::sfuLxBytesPerCycle},
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
    {"memory.dma_duplex", &Arch::dmaDuplex, false},
    {"memory.port_cores", &Arch::portCores},
    {"memory.port_bytes_per_s", &Arch::portBytesPerS},
    {"memory.per_core_span_bytes", &Arch::perCoreSpanBytes},
    {"ring.bytes_per_cycle", &Arch::ringBytesPerCycle},
    {"ring.hop_latency_cycles", &Arch::ringHopLatencyCycles, false},
    {"link.bandwidth_bytes_per_s", &Arch::linkBandwidthBytesPerS},
    {"link.latency_s", &Arch::linkLatencyS, false},
    {"numerics.dlfloat16_exponent_bits", &Arch::dlfloat16ExponentBits},
    {"numerics.dlfloat16_fraction_bits", &Arch::dlfloat16FractionBits},
};

} // namespace

std::optional<Arch> Arch::fromParameters(
    std::string name, const std::function<bool(const char *, Parameter &)> &get,
    std::string_view sourceName, std::string &error) {
  auto fail = [&](std::string_view key, std::string_view what) {
    error = std::string(sourceName) + ": key '" + std::string(key) + "' " + std::string(what);
    return std::nullopt;
  };
  Arch a;
  a.name = std::move(name);
  for (const Field &f : kFields) {
    bool isInteger = std::holds_alternative<int64_t Arch::*>(f.member);
    Parameter p{f.key, isInteger, 0, 0};
    if (!get(f.key, p))
      return fail(f.key, "is missing");
    if (p.isInteger != isInteger)
      return fail(f.key, "has the wrong type");
    double value;
    if (isInteger)
      value = static_cast<double>(a.*std::get<int64_t Arch::*>(f.member) = p.integer);
    else
      value = a.*std::get<double Arch::*>(f.member) = p.real;
    if (value < 0 || (f.positive && value == 0))
      return fail(f.key, f.positive ? "must be positive" : "must not be negative");
  }
  if (a.lxReservedBytes >= a.lxBytes)
    return fail("lx.reserved_bytes", "leaves no usable LX");
  if (a.lxBytes % a.stickBytes != 0)
    return fail("lx.bytes", "must be a whole number of sticks");
  if (a.memoryPorts() > 64)
    return fail("memory.port_cores", "leaves more than 64 memory ports");
  if (a.dmaDuplex > 1)
    return fail("memory.dma_duplex", "must be 0 or 1");
  if (a.dlfloat16ExponentBits + a.dlfloat16FractionBits != 15)
    return fail("numerics.dlfloat16_fraction_bits",
                "plus the exponent bits must be 15 (a 16-bit format)");
  return a;
}

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
  std::optional<std::string> name = root.at_path("name").value<std::string>();
  if (!name) {
    error = std::string(sourceName) + ": key 'name' is missing or not a string";
    return std::nullopt;
  }
  // A parameter of the wrong TOML type is handed on with the other kind, so
  // that fromParameters names it as having the wrong type.
  return fromParameters(
      *name,
      [&](const char *key, Parameter &p) {
        toml::node_view<const toml::node> node = root.at_path(key);
        if (!node)
          return false;
        if (p.isInteger && !node.is_integer()) {
          p.isInteger = false;
        } else if (p.isInteger) {
          p.integer = *node.value<int64_t>();
        } else if (std::optional<double> v = node.value<double>()) {
          p.real = *v; // integers are accepted where reals are expected
        } else {
          p.isInteger = true;
        }
        return true;
      },
      sourceName, error);
}

std::vector<Arch::Parameter> Arch::parameters() const {
  std::vector<Parameter> out;
  for (const Field &f : kFields) {
    if (auto *member = std::get_if<int64_t Arch::*>(&f.member))
      out.push_back({f.key, true, this->*(*member), 0});
    else
      out.push_back({f.key, false, 0, this->*std::get<double Arch::*>(f.member)});
  }
  return out;
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

namespace {
/// Where this code was loaded from: the shared library holding it, or the
/// executable it is linked into.
std::filesystem::path loadedFrom() {
  Dl_info info;
  link_map *map = nullptr;
  if (dladdr1(reinterpret_cast<void *>(&loadedFrom), &info, reinterpret_cast<void **>(&map),
              RTLD_DL_LINKMAP) &&
      map && map->l_name && *map->l_name)
    return map->l_name;
  // The main program's link map has no name.
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec);
}
} // namespace

std::string Arch::lookupPath(std::string_view explicitPath) {
  if (!explicitPath.empty())
    return std::string(explicitPath);
  if (const char *env = std::getenv("SPYRE_ARCH"); env && *env)
    return env;
  // The package installs the description in spyre_mlir/arch; the code is in
  // spyre_mlir/bin (tools), spyre_mlir/_mlir_libs (C API) or spyre_mlir (the
  // simulator module). A build tree has <build>/arch beside <build>/bin.
  std::filesystem::path dir = loadedFrom().parent_path();
  std::filesystem::path candidates[] = {dir.parent_path() / "arch" / "spyre_card.toml",
                                        dir / "arch" / "spyre_card.toml"};
  std::error_code ec;
  for (const std::filesystem::path &candidate : candidates)
    if (std::filesystem::exists(candidate, ec))
      return candidate.string();
  return candidates[0].string(); // the error then names where it was expected
}

} // namespace spyre
