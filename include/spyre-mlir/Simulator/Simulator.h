//===- Simulator.h - functional and timing simulator of the card -*- C++ -*-===//
//
// Runs a validated Program on a model of the card described by an Arch:
// per-core sequencers issuing to DMA, PT and SFU engines that run
// concurrently under semaphore synchronisation, device-memory bandwidth
// shared by all cores, and the ring. Results are what the card computes
// (DLFloat16 rounding included), deterministic bit for bit; time is in
// cycles of the card's clock. Depends on no MLIR header.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_SIMULATOR_SIMULATOR_H
#define SPYRE_SIMULATOR_SIMULATOR_H

#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Isa/Program.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace spyre {

struct EngineCounters {
  double busyCycles = 0;  ///< executing an instruction
  double stallCycles = 0; ///< an instruction is queued but waits on a semaphore
  int64_t instructions = 0;
};

struct Counters {
  EngineCounters engines[isa::kNumEngines];
  int64_t deviceReadBytes = 0, deviceWriteBytes = 0; ///< whole sticks moved
  int64_t ringBytes = 0, lxReadBytes = 0, lxWriteBytes = 0;
  int64_t macs = 0, vectorOps = 0;
  /// Finite values that became infinities when rounded to DLFloat16.
  int64_t dlfloat16Overflows = 0;
  void add(const Counters &other);
};

struct RunStats {
  double cycles = 0;                     ///< when the last core finished
  std::vector<double> coreCycles;        ///< per core, when it finished
  std::vector<Counters> cores;           ///< per core
  std::map<int64_t, Counters> kernels;   ///< per `kernel` marker id, all cores
  std::map<int64_t, double> kernelCycles;///< span of each kernel marker
  /// Bytes that crossed the device-memory bus each way: whole sticks, and a
  /// broadcast read once however many cores received it (the per-core
  /// counters count each core's copy).
  double busReadBytes = 0, busWriteBytes = 0;
  std::string traceJson;                 ///< Chrome trace events, if asked for
};

class Simulator {
public:
  /// `maxHostBytes` bounds the host memory a program's scratch and constant
  /// buffers may take (device memory the simulator has to provide itself).
  explicit Simulator(Arch arch, uint64_t maxHostBytes = kDefaultMaxHostBytes);
  static constexpr uint64_t kDefaultMaxHostBytes = uint64_t{4} << 30;
  ~Simulator();

  const Arch &arch() const { return arch_; }

  /// Validates and loads a program; throws Error if it is invalid or was
  /// built for another architecture description.
  void load(Program program);
  const Program &program() const;

  /// Binds host memory to buffer `index` without copying. The memory must
  /// hold the buffer's bytes in its device element type and stay alive
  /// while the program runs. Unbound scratch buffers are allocated.
  void bind(uint32_t index, void *data, size_t bytes);

  /// Runs the loaded program once. Throws Error on a run-time fault (index
  /// out of range, deadlock); device memory is never accessed out of bounds.
  RunStats run(bool trace = false);

private:
  struct Impl;
  Arch arch_;
  uint64_t maxHostBytes_;
  std::unique_ptr<Impl> impl_;
};

} // namespace spyre

#endif // SPYRE_SIMULATOR_SIMULATOR_H
