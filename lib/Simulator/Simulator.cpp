//===- Simulator.cpp - when things happen on the card ---------------------===//
//
// A discrete-event simulation. Each core's sequencer expands hardware loops
// and issues instructions in order into per-engine queues (issue itself
// takes no time; a full queue stalls it). An engine starts the instruction
// at the head of its queue once its semaphore condition holds, and applies
// the instruction's effect when it completes, so results follow the
// program's synchronisation exactly. DMA transfers share the card's
// device-memory bandwidth fairly among those in flight, each capped by its
// core's DMA port and by its memory port's rate in its direction; ring
// transfers run at the link rate. A core's DMA engine may move a load beside
// a store (`memory.dma_duplex`): two slots, started and completed in program
// order, so only the time of a program changes.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/Simulator/Simulator.h"
#include "Kernels.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <sstream>

namespace spyre {
using namespace isa;

void Counters::add(const Counters &o) {
  for (int e = 0; e < kNumEngines; ++e) {
    engines[e].busyCycles += o.engines[e].busyCycles;
    engines[e].stallCycles += o.engines[e].stallCycles;
    engines[e].instructions += o.engines[e].instructions;
  }
  deviceReadBytes += o.deviceReadBytes;
  deviceWriteBytes += o.deviceWriteBytes;
  ringBytes += o.ringBytes;
  lxReadBytes += o.lxReadBytes;
  lxWriteBytes += o.lxWriteBytes;
  macs += o.macs;
  vectorOps += o.vectorOps;
  dlfloat16Overflows += o.dlfloat16Overflows;
}

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

/// A core's engine slots: one per engine, indexed by it, and the DMA
/// engine's second slot, for a load beside a store.
constexpr int kSecondDma = kNumEngines;
constexpr int kSlots = kNumEngines + 1;
constexpr int kDma = static_cast<int>(Engine::dma);
constexpr int engineOfSlot(int slot) { return slot == kSecondDma ? kDma : slot; }
constexpr bool isDma(int slot) { return engineOfSlot(slot) == kDma; }
constexpr int otherDma(int slot) { return slot == kDma ? kSecondDma : kDma; }

bool isLoad(const Instr &in) {
  return static_cast<Opcode>(in.opcode) == Opcode::dma && in.ops[0].buffer == kLx &&
         in.ops[1].buffer != kLx;
}
bool isStore(const Instr &in) {
  return static_cast<Opcode>(in.opcode) == Opcode::dma && in.ops[0].buffer != kLx &&
         in.ops[1].buffer == kLx;
}

/// Whether operand `a` of transfer `x` and operand `b` of `y` may touch the
/// same bytes.
bool overlap(const Instr &x, int a, const Instr &y, int b) {
  const Operand &p = x.ops[a], &q = y.ops[b];
  if (p.buffer != q.buffer)
    return false;
  auto [plo, phi] = transferReach<int64_t>(x, a);
  auto [qlo, qhi] = transferReach<int64_t>(y, b);
  return p.offset + plo < q.offset + qhi && q.offset + qlo < p.offset + phi;
}

/// Whether transfer `next` may flow while `flowing`, before it in the DMA
/// queue, still does: one loads and the other stores, and neither touches
/// what the other writes (the card would see the bytes of the wrong order;
/// results here never do, as transfers complete in program order).
bool mayFlowBeside(const Instr &flowing, const Instr &next) {
  bool loadsFirst = isLoad(flowing);
  const Instr &load = loadsFirst ? flowing : next, &store = loadsFirst ? next : flowing;
  if (!isLoad(load) || !isStore(store))
    return false;
  return !overlap(load, 0, store, 1) && !overlap(load, 1, store, 0);
}

Engine engineOf(Opcode op) {
  switch (op) {
  case Opcode::dma: case Opcode::ring: case Opcode::gather: case Opcode::scatter:
    return Engine::dma;
  case Opcode::matmul: return Engine::pt;
  case Opcode::unary: case Opcode::binary: case Opcode::select: case Opcode::fill:
  case Opcode::reduce: return Engine::sfu;
  default: return Engine::control;
  }
}

const char *nameOf(const Instr &in) {
  switch (static_cast<Opcode>(in.opcode)) {
  case Opcode::dma: return "dma";
  case Opcode::ring: return "ring";
  case Opcode::gather: return "gather";
  case Opcode::scatter: return "scatter";
  case Opcode::matmul: return "matmul";
  case Opcode::unary: return "unary";
  case Opcode::binary: return "binary";
  case Opcode::select: return "select";
  case Opcode::fill: return "fill";
  case Opcode::reduce: return "reduce";
  default: return "?";
  }
}

/// An issued instruction with its loop increments applied.
struct Issued {
  Instr in;
  size_t pc;
  int64_t kernel;
};

/// One kernel's traffic on the device-memory bus: bytes moved so far each
/// way.
struct KernelBus {
  double read = 0, written = 0;
  /// Which direction pays the read/write turnaround now, while `reads` and
  /// `writes` transfers flow: the one that has moved fewer bytes, or, level,
  /// the one fewer transfers move (half each when as many move both ways).
  /// Over the kernel this charges min(read, write) bytes, as IBM's fit does.
  std::pair<double, double> turnaroundShares(int reads, int writes) const {
    double lead = level() ? double(writes - reads) : written - read;
    return lead > 0 ? std::pair{1.0, 0.0} : lead < 0 ? std::pair{0.0, 1.0} : std::pair{0.5, 0.5};
  }
  /// Level within the rounding of the simulated time at which the lesser
  /// direction caught up (so that catching up ends, never repeats).
  bool level() const { return std::abs(written - read) <= 1e-9 * (read + written) + 1e-6; }
};

struct EngineState {
  std::deque<Issued> queue;
  bool busy = false;
  Issued cur{};
  double start = 0, end = 0;      // PT, SFU; DMA: end is unknown until done
  double latencyEnd = 0;          // DMA: the transfer starts flowing here
  double remaining = 0;           // DMA: bytes still to move
  double fixedRate = 0;           // DMA: > 0 unless it shares device bandwidth
  int readsDevice = 0, writesDevice = 0; // DMA: directions on the device-memory bus
  const EngineState *leader = nullptr;   // DMA: an identical read in flight it shares
  KernelBus *bus = nullptr;              // DMA: its kernel's traffic on the device-memory bus
  uint64_t order = 0;                    // DMA: start order on its core, completed in it
  double busRate = 0;                    // DMA: bytes per cycle on the bus, as shareBus set it

  bool flowing(double now) const { return busy && now >= latencyEnd && remaining > 1e-6; }
};

/// A device-memory transfer flowing now, while shareBus sets its rate.
struct Flow {
  EngineState *e;
  size_t kernel;  // its kernel's place in flowingKernels
  double cost;    // bus cycles per byte it moves
  double coreCap; // its share of its core's DMA port, bytes per cycle
  uint64_t ports; // the memory ports it flows through: its core's, and a
                  // broadcast read's riders'
  bool fixed;     // its rate is set
};

struct LoopFrame {
  size_t begin;
  int64_t trip, iv;
};

struct CoreState {
  const Stream *stream = nullptr;
  std::vector<size_t> loopEnd; // for each `loop`, the index of its loop_end
  size_t pc = 0;
  std::vector<LoopFrame> loops;
  EngineState engines[kSlots]; // the DMA queue is engines[kDma]'s
  uint64_t dmaStarted = 0;
  int64_t sems[kNumSems] = {};
  bool streamDone = false, atBarrier = false, finished = false;
  double blockedUntil = 0, finishCycle = 0;
  int64_t kernel = -1;

  bool idle() const {
    for (const EngineState &e : engines)
      if (e.busy || !e.queue.empty())
        return false;
    return true;
  }
  /// Whether the DMA transfer in `slot` must wait for the other slot's,
  /// started before it, to complete.
  bool completesAfterOther(int slot) const {
    const EngineState &o = engines[otherDma(slot)];
    return o.busy && o.order < engines[slot].order;
  }
};

} // namespace

struct Simulator::Impl {
  explicit Impl(const Arch &arch)
      : arch(arch), dl(static_cast<int>(arch.dlfloat16ExponentBits),
                       static_cast<int>(arch.dlfloat16FractionBits)) {}

  const Arch &arch;
  DLFloat16 dl;
  Program program;
  std::vector<int64_t> lxHighWater;
  bool loaded = false;
  std::vector<void *> bound;
  std::vector<std::vector<uint8_t>> owned; // scratch and constant buffers

  // Per run.
  std::vector<CoreState> cores;
  Memory mem;
  double now = 0;
  /// Bytes each kernel (by its `kernel` marker, -1 before any) has read and
  /// written over the device-memory bus so far: which direction pays the
  /// read/write turnaround, and, summed, the run's bus counters.
  std::map<int64_t, KernelBus> kernelBus;
  /// The kernels with transfers flowing now (rarely more than one) and how
  /// many flow each way, as shareBus() last found them; kept here so
  /// that each event does not allocate.
  std::vector<std::pair<const KernelBus *, std::pair<int, int>>> flowingKernels;
  /// shareBus's work: the transfers flowing now, and per memory port and
  /// direction the rate already fixed and how many transfers are still free.
  std::vector<Flow> flows;
  std::vector<std::pair<double, int>> groupUse;
  RunStats stats;
  std::ostringstream trace;
  bool tracing = false;
  bool firstEvent = true;
  std::map<int64_t, double> kernelStart; // first start of each kernel marker

  std::string where(uint32_t core, size_t pc) const {
    return "core " + std::to_string(core) + ", instruction " + std::to_string(pc) + ": ";
  }

  void prepare() {
    mem = Memory{};
    owned.assign(program.buffers.size(), {});
    for (size_t i = 0; i < program.buffers.size(); ++i) {
      const Buffer &b = program.buffers[i];
      uint8_t *ptr = static_cast<uint8_t *>(bound[i]);
      if (!ptr) {
        if (b.kind == BufferKind::input || b.kind == BufferKind::inout ||
            b.kind == BufferKind::output)
          throw Error("buffer '" + b.name + "' is not bound to memory");
        owned[i] = b.kind == BufferKind::constant ? b.constant
                                                   : std::vector<uint8_t>(b.bytes, 0);
        ptr = owned[i].data();
      }
      mem.buffers.push_back(ptr);
      mem.bufferBytes.push_back(b.bytes);
    }
    // LX starts zeroed on every run. Only the bytes the program can reach
    // (validation proved it touches no others) are backed by host memory.
    mem.lx.resize(program.numCores);
    for (uint32_t core = 0; core < program.numCores; ++core)
      mem.lx[core].assign(lxHighWater[core], 0);
    cores.assign(program.numCores, CoreState{});
    for (const Stream &s : program.streams) {
      CoreState &c = cores[s.core];
      c.stream = &s;
      c.loopEnd.assign(s.instrs.size(), 0);
      std::vector<size_t> open;
      for (size_t pc = 0; pc < s.instrs.size(); ++pc) {
        auto op = static_cast<Opcode>(s.instrs[pc].opcode);
        if (op == Opcode::loop) open.push_back(pc);
        else if (op == Opcode::loop_end) { c.loopEnd[open.back()] = pc; open.pop_back(); }
      }
    }
    for (CoreState &c : cores)
      if (!c.stream) { c.streamDone = c.finished = true; }
    now = 0;
    kernelBus.clear();
    stats = RunStats{};
    stats.cores.assign(program.numCores, Counters{});
    stats.coreCycles.assign(program.numCores, 0);
    trace.str("");
    firstEvent = true;
    kernelStart.clear();
  }

  Issued resolve(const CoreState &c, const Instr &in, size_t pc) const {
    Issued out{in, pc, c.kernel};
    for (size_t l = 0; l < c.loops.size(); ++l) {
      const LoopFrame &f = c.loops[c.loops.size() - 1 - l];
      for (Operand &o : out.in.ops)
        o.offset += o.loopInc[l] * f.iv;
      out.in.waitCount += in.waitInc[l] * f.iv;
    }
    return out;
  }

  /// Advances a core's sequencer as far as it can go at the current time.
  /// Returns whether anything changed.
  bool issue(uint32_t id) {
    CoreState &c = cores[id];
    bool progressed = false;
    while (!c.streamDone && !c.atBarrier && now >= c.blockedUntil) {
      const std::vector<Instr> &instrs = c.stream->instrs;
      if (c.pc == instrs.size()) {
        c.streamDone = true;
        progressed = true;
        break;
      }
      const Instr &in = instrs[c.pc];
      auto op = static_cast<Opcode>(in.opcode);
      switch (op) {
      case Opcode::nop:
        ++c.pc;
        break;
      case Opcode::kernel:
        c.kernel = in.shape[0];
        ++c.pc;
        break;
      case Opcode::loop:
        if (in.shape[0] == 0) {
          c.pc = c.loopEnd[c.pc] + 1;
        } else {
          c.loops.push_back({c.pc + 1, in.shape[0], 0});
          ++c.pc;
        }
        break;
      case Opcode::loop_end: {
        LoopFrame &f = c.loops.back();
        if (++f.iv < f.trip) {
          c.pc = f.begin;
        } else {
          c.loops.pop_back();
          ++c.pc;
        }
        break;
      }
      case Opcode::barrier:
        if (!c.idle())
          return progressed; // drain first
        c.atBarrier = true;
        ++c.pc;
        break;
      default: {
        EngineState &e = c.engines[static_cast<int>(engineOf(op))];
        if (static_cast<int64_t>(e.queue.size()) >= arch.engineQueueDepth)
          return progressed;
        e.queue.push_back(resolve(c, in, c.pc));
        ++c.pc;
        break;
      }
      }
      progressed = true;
    }
    return progressed;
  }

  bool ready(const CoreState &c, const Issued &i) const {
    return i.in.waitSem == kNoSem || c.sems[i.in.waitSem] >= i.in.waitCount;
  }

  /// A read from device memory of exactly the same bytes as `in` that
  /// another core started at this cycle and that is still to flow: the
  /// card reads a broadcast operand once for all the cores that want it
  /// (SPYRE_HW.md, "broadcast operand ... read once"), so this one rides
  /// along instead of using the bus again.
  const EngineState *sameRead(uint32_t id, const Instr &in) const {
    for (uint32_t other = 0; other < cores.size(); ++other) {
      if (other == id)
        continue;
      for (int slot : {kDma, kSecondDma}) {
        const EngineState &o = cores[other].engines[slot];
        if (!o.busy || o.leader || o.fixedRate > 0 || !o.readsDevice || o.writesDevice ||
            o.start != now)
          continue;
        const Instr &p = o.cur.in;
        const Operand &a = p.ops[1], &b = in.ops[1];
        if (static_cast<Opcode>(in.opcode) == Opcode::dma && p.opcode == in.opcode &&
            a.buffer == b.buffer && a.offset == b.offset &&
            std::equal(std::begin(p.shape), std::end(p.shape), std::begin(in.shape)) &&
            std::equal(std::begin(a.stride), std::end(a.stride), std::begin(b.stride)))
          return &o;
      }
    }
    return nullptr;
  }

  /// LX bytes a vector instruction reads and writes per element: its
  /// operands that hold a value per element (a column stride), not a
  /// per-row value such as a row statistic or a reduction's accumulator.
  static double streamedBytesPerElement(const Instr &in) {
    ElementOperands views = elementOperands(in);
    double bytes = 0;
    for (int i = views.first; i < views.end; ++i)
      if (in.ops[i].stride[1] != 0 || in.shape[1] <= 1)
        bytes += double(dtypeBytes(static_cast<DType>(in.ops[i].dtype)));
    return bytes;
  }

  /// Bytes a DMA moves through device memory: every row is padded to whole
  /// sticks, plus one more stick where the row is not stick aligned.
  int64_t dmaChargedBytes(const Instr &in, const Operand &device) const {
    int64_t row = in.shape[0], rows = in.shape[1] * in.shape[2] * in.shape[3];
    if (auto op = static_cast<Opcode>(in.opcode); op == Opcode::gather || op == Opcode::scatter)
      rows = in.shape[1];
    // Rows that all start at the same place within a stick (stick-multiple
    // strides) touch ceil((phase + row) / stick) sticks each: a half-stick
    // row inside one stick costs one stick, not two. Rows at varying
    // phases are charged one stick more than they span.
    int64_t stick = arch.stickBytes;
    bool uniform = rows <= 1 || (device.stride[0] % stick == 0 && device.stride[1] % stick == 0 &&
                                 device.stride[2] % stick == 0);
    int64_t phase = ((device.offset % stick) + stick) % stick;
    int64_t sticks = uniform ? (phase + row + stick - 1) / stick : (row + stick - 1) / stick + 1;
    return rows * sticks * stick;
  }

  /// Whether the head of the DMA queue may start in `slot`: the other slot
  /// is free, or the card moves a load beside a store and these may.
  bool mayStartDma(const CoreState &c, int slot) const {
    const EngineState &o = c.engines[otherDma(slot)];
    return !o.busy || (arch.dmaDuplex && mayFlowBeside(o.cur.in, c.engines[kDma].queue.front().in));
  }

  void start(uint32_t id, int slot) {
    CoreState &c = cores[id];
    EngineState &e = c.engines[slot];
    int engine = engineOfSlot(slot);
    std::deque<Issued> &queue = c.engines[engine].queue;
    e.cur = queue.front();
    queue.pop_front();
    e.busy = true;
    e.start = now;
    if (engine == kDma)
      e.order = ++c.dmaStarted;
    const Instr &in = e.cur.in;
    Counters k;
    k.engines[engine].instructions++;
    switch (static_cast<Opcode>(in.opcode)) {
    case Opcode::matmul: {
      // The array computes at its peak unless the A and B operands cannot be
      // streamed from LX fast enough (operand feed); each instruction also
      // fills and drains the systolic pipeline once.
      int64_t macs = in.shape[0] * in.shape[1] * in.shape[2];
      double ab =
          static_cast<double>(in.shape[0] * in.shape[1]) * dtypeBytes(static_cast<DType>(in.ops[1].dtype)) +
          static_cast<double>(in.shape[1] * in.shape[2]) * dtypeBytes(static_cast<DType>(in.ops[2].dtype));
      double acc = static_cast<double>(in.shape[0] * in.shape[2]) *
                   dtypeBytes(static_cast<DType>(in.ops[0].dtype)) * ((in.flags & kAccumulate) ? 2 : 1);
      e.end = now + arch.ptCycles(in.shape[0], in.shape[1], in.shape[2], ab, acc);
      k.macs += macs;
      break;
    }
    case Opcode::dma: case Opcode::gather: case Opcode::scatter: case Opcode::ring: {
      auto op = static_cast<Opcode>(in.opcode);
      bool indexed = op == Opcode::gather || op == Opcode::scatter;
      bool dstDev = in.ops[0].buffer != kLx;
      bool srcDev = op != Opcode::ring && in.ops[1].buffer != kLx;
      int64_t payload = in.shape[0] * (indexed ? in.shape[1] : in.shape[1] * in.shape[2] * in.shape[3]);
      if (op == Opcode::ring) {
        int64_t d = std::abs(static_cast<int64_t>(in.ops[0].core) - id);
        int64_t hops = std::min<int64_t>(d, program.numCores - d);
        e.latencyEnd = now + hops * arch.ringHopLatencyCycles;
        e.remaining = payload;
        e.fixedRate = arch.ringBytesPerCycle;
        k.ringBytes += payload;
      } else if (dstDev || srcDev) {
        int64_t charged = dmaChargedBytes(in, dstDev ? in.ops[0] : in.ops[1]);
        e.latencyEnd = now + arch.dmaLatencyCycles;
        e.remaining = charged;
        e.fixedRate = 0;
        e.readsDevice = srcDev;
        e.writesDevice = dstDev;
        e.leader = srcDev && !dstDev ? sameRead(id, in) : nullptr;
        e.bus = &kernelBus[e.cur.kernel];
        (dstDev ? k.deviceWriteBytes : k.deviceReadBytes) += charged;
        if (dstDev && srcDev) k.deviceReadBytes += charged;
      } else { // LX to LX on one core
        e.latencyEnd = now;
        e.remaining = payload;
        e.fixedRate = arch.dmaPortBytesPerCycle;
      }
      if (!dstDev) k.lxWriteBytes += payload;
      if (!srcDev) k.lxReadBytes += payload;
      break;
    }
    default: { // vector unit
      int64_t elems = in.shape[0] * std::max<int64_t>(in.shape[1], 1);
      bool reduce = static_cast<Opcode>(in.opcode) == Opcode::reduce;
      e.end = now + arch.sfuCycles(double(elems), streamedBytesPerElement(in), reduce,
                                   isTranscendental(in));
      k.vectorOps += elems;
    }
    }
    stats.cores[id].add(k);
    if (e.cur.kernel >= 0) {
      stats.kernels[e.cur.kernel].add(k);
      kernelStart.emplace(e.cur.kernel, now); // keeps the first start
    }
  }

  /// Rate of a DMA transfer in flight, in bytes per cycle (for one on the
  /// device-memory bus, as shareBus last set it).
  double rateOf(const EngineState &e) const {
    if (e.fixedRate > 0)
      return e.fixedRate;
    if (e.leader) // rides along with an identical read: moves as its leader does
      return rateOf(*e.leader);
    return e.busRate;
  }

  /// Sets the rate of every device-memory transfer flowing now. A byte
  /// costs the bus 1 / bandwidth cycles, plus the read/write turnaround in
  /// the direction that pays it in the transfer's kernel (KernelBus); a copy
  /// from device memory to device memory moves both ways. The bus serves
  /// the transfers fairly (max-min): each moves as many bytes per cycle as
  /// the others unless a cap binds it, and the bus time a capped transfer
  /// leaves goes to the rest. The caps: its share of its core's DMA port,
  /// and, shared by the transfers of one memory port in one direction, the
  /// port's rate.
  void shareBus() {
    flowingKernels.clear();
    flows.clear();
    for (uint32_t id = 0; id < cores.size(); ++id) {
      CoreState &c = cores[id];
      EngineState &first = c.engines[kDma], &second = c.engines[kSecondDma];
      int onCore = std::max(1, first.flowing(now) + second.flowing(now));
      for (EngineState *e : {&first, &second}) {
        if (!e->flowing(now) || e->fixedRate > 0 || e->leader)
          continue;
        auto it = std::find_if(flowingKernels.begin(), flowingKernels.end(),
                               [&](const auto &k) { return k.first == e->bus; });
        if (it == flowingKernels.end())
          it = flowingKernels.insert(it, {e->bus, {0, 0}});
        it->second.first += e->readsDevice;
        it->second.second += e->writesDevice;
        flows.push_back({e, size_t(it - flowingKernels.begin()), 0,
                         double(arch.dmaPortBytesPerCycle) / onCore,
                         uint64_t{1} << arch.memoryPortOf(id), false});
      }
    }
    // A read that other cores ride along reaches each of them through its
    // own port.
    for (uint32_t id = 0; id < cores.size(); ++id)
      for (int slot : {kDma, kSecondDma})
        if (const EngineState *leader = cores[id].engines[slot].leader)
          for (Flow &f : flows)
            if (f.e == leader)
              f.ports |= uint64_t{1} << arch.memoryPortOf(id);
    double t = arch.turnaroundCyclesPerByte(), base = 1 / arch.deviceBytesPerCycle();
    for (Flow &f : flows) {
      auto [reads, writes] = flowingKernels[f.kernel].second;
      auto [readShare, writeShare] = f.e->bus->turnaroundShares(reads, writes);
      f.cost =
          f.e->readsDevice * (base + readShare * t) + f.e->writesDevice * (base + writeShare * t);
    }
    // Water-filling: raise every free transfer's rate together until the
    // bus is full or the tightest cap binds; fix what it binds; repeat.
    double portRate = arch.portBytesPerCycle();
    size_t groups = 2 * size_t(arch.memoryPorts()); // 2p: port p's reads, 2p + 1: its writes
    groupUse.assign(groups, {0, 0});
    auto inGroup = [&](const Flow &f, size_t g) {
      return (f.ports >> (g / 2) & 1) && (g % 2 ? f.e->writesDevice : f.e->readsDevice);
    };
    while (true) {
      double busLeft = 1, freeCost = 0;
      std::fill(groupUse.begin(), groupUse.end(), std::pair<double, int>{0, 0});
      for (const Flow &f : flows) {
        if (f.fixed)
          busLeft -= f.e->busRate * f.cost;
        else
          freeCost += f.cost;
        for (size_t g = 0; g < groups; ++g) {
          if (!inGroup(f, g))
            continue;
          if (f.fixed)
            groupUse[g].first += f.e->busRate;
          else
            groupUse[g].second += 1;
        }
      }
      if (freeCost <= 0)
        return; // every rate is set
      // The rate the free transfers share the bus at, unless a cap below it
      // binds: a transfer's share of its core's DMA port, or what a port's
      // direction has left for its free transfers.
      double rate = std::max(0.0, busLeft) / freeCost;
      const Flow *cappedFlow = nullptr;
      int64_t cappedGroup = -1;
      for (const Flow &f : flows)
        if (!f.fixed && f.coreCap < rate) {
          rate = f.coreCap;
          cappedFlow = &f;
        }
      for (size_t g = 0; g < groups; ++g) {
        double left = std::max(0.0, portRate - groupUse[g].first);
        if (groupUse[g].second > 0 && left / groupUse[g].second < rate) {
          rate = left / groupUse[g].second;
          cappedGroup = int64_t(g);
          cappedFlow = nullptr;
        }
      }
      for (Flow &f : flows) {
        bool binds = cappedGroup >= 0 ? inGroup(f, size_t(cappedGroup))
                     : cappedFlow     ? cappedFlow == &f
                                      : true; // no cap: all of them at the bus's rate
        if (!f.fixed && binds) {
          f.e->busRate = rate;
          f.fixed = true;
        }
      }
    }
  }

  /// When, at the rates of now, a kernel's lesser direction on the bus
  /// catches up with the other, so that the turnaround changes sides.
  double nextTurnaround() const {
    double next = kNever;
    for (size_t k = 0; k < flowingKernels.size(); ++k) {
      const KernelBus *bus = flowingKernels[k].first;
      double gap = bus->written - bus->read, closing = 0;
      for (const Flow &f : flows)
        if (f.kernel == k)
          closing += (f.e->readsDevice - f.e->writesDevice) * f.e->busRate;
      if (!bus->level() && gap * closing > 0 && now + gap / closing > now)
        next = std::min(next, now + gap / closing);
    }
    return next;
  }

  /// The next event, at the rates shareBus set for now.
  double nextEvent() const {
    double next = nextTurnaround();
    for (const CoreState &c : cores) {
      if (!c.streamDone && !c.atBarrier && c.blockedUntil > now)
        next = std::min(next, c.blockedUntil);
      for (int slot = 0; slot < kSlots; ++slot) {
        const EngineState &e = c.engines[slot];
        if (!e.busy)
          continue;
        if (!isDma(slot))
          next = std::min(next, e.end);
        else if (now < e.latencyEnd)
          next = std::min(next, e.latencyEnd);
        else if (e.remaining > 1e-6 || !c.completesAfterOther(slot))
          next = std::min(next, now + e.remaining / rateOf(e));
      }
    }
    return next;
  }

  /// Moves the time on to `to`, the transfers at the rates shareBus set.
  void advance(double to) {
    double dt = to - now;
    for (uint32_t id = 0; id < cores.size(); ++id) {
      CoreState &c = cores[id];
      for (int slot = 0; slot < kSlots; ++slot) {
        EngineState &e = c.engines[slot];
        int engine = engineOfSlot(slot);
        // The DMA engine is busy while either slot is, stalled while neither
        // is and its queue holds transfers.
        bool counted = slot == kSecondDma && c.engines[kDma].busy;
        if (e.busy) {
          if (!counted)
            stats.cores[id].engines[engine].busyCycles += dt;
          if (isDma(slot) && now >= e.latencyEnd) {
            double moved = std::min(e.remaining, rateOf(e) * dt);
            e.remaining -= moved;
            if (e.fixedRate == 0 && !e.leader) {
              e.bus->read += moved * e.readsDevice;
              e.bus->written += moved * e.writesDevice;
            }
          }
        } else if (slot != kSecondDma && !e.queue.empty() &&
                   !(slot == kDma && c.engines[kSecondDma].busy)) {
          stats.cores[id].engines[engine].stallCycles += dt;
        }
      }
    }
    now = to;
  }

  bool done(const CoreState &c, int slot) const {
    const EngineState &e = c.engines[slot];
    if (!isDma(slot))
      return e.end <= now;
    return now >= e.latencyEnd && e.remaining <= 1e-6 && !c.completesAfterOther(slot);
  }

  /// Elements an instruction computes on the host (products for the PT):
  /// what decides whether its batch runs on several host threads.
  static int64_t hostWork(const Instr &in) {
    if (static_cast<Opcode>(in.opcode) == Opcode::matmul)
      return in.shape[0] * in.shape[1] * in.shape[2];
    return in.shape[0] * in.shape[1];
  }
  static constexpr int64_t kParallelHostWork = int64_t{1} << 16;

  /// Applies the effects of the instructions that complete now, then
  /// signals. PT and SFU instructions touch only their own core's LX, so
  /// they run in parallel on the host; data movement, which may touch memory
  /// shared by cores, runs after them in (core, engine) order.
  void completeAll(const std::vector<std::pair<uint32_t, int>> &done) {
    std::vector<std::pair<uint32_t, int>> compute, movement;
    for (auto [id, slot] : done)
      (isDma(slot) ? movement : compute).push_back({id, slot});
    std::vector<std::string> errors(compute.size());
    std::vector<int64_t> overflows(compute.size(), 0);
    // A team of host threads is worth starting only for enough work: small
    // tiles finish before the threads wake, and on a busy host (tests in
    // parallel) spinning threads slowed small kernels 50-fold.
    int64_t work = 0;
    for (auto [id, slot] : compute)
      work += hostWork(cores[id].engines[slot].cur.in);
#pragma omp parallel for schedule(dynamic) if (compute.size() > 1 && work >= kParallelHostWork)
    for (size_t i = 0; i < compute.size(); ++i) {
      auto [id, slot] = compute[i];
      const Issued &cur = cores[id].engines[slot].cur;
      try {
        overflows[i] = execute(cur.in, id, mem, dl);
      } catch (const std::exception &e) {
        errors[i] = where(id, cur.pc) + e.what();
      }
    }
    for (const std::string &error : errors)
      if (!error.empty())
        throw Error(error); // the first in (core, slot) order: deterministic
    for (size_t i = 0; i < compute.size(); ++i)
      if (overflows[i])
        countOverflows(compute[i].first, cores[compute[i].first].engines[compute[i].second].cur,
                       overflows[i]);
    for (auto [id, slot] : movement) {
      const Issued &cur = cores[id].engines[slot].cur;
      try {
        execute(cur.in, id, mem, dl); // copies: nothing is rounded
      } catch (const Error &e) {
        throw Error(where(id, cur.pc) + e.what());
      }
    }
    for (auto [id, slot] : done)
      finish(id, slot);
  }

  void countOverflows(uint32_t id, const Issued &cur, int64_t n) {
    stats.cores[id].dlfloat16Overflows += n;
    if (cur.kernel >= 0)
      stats.kernels[cur.kernel].dlfloat16Overflows += n;
  }

  void finish(uint32_t id, int slot) {
    CoreState &c = cores[id];
    EngineState &e = c.engines[slot];
    const Instr &in = e.cur.in;
    if (in.signalSem != kNoSem) {
      bool remote = (in.flags & kSignalRemote) && static_cast<Opcode>(in.opcode) == Opcode::ring;
      cores[remote ? in.ops[0].core : id].sems[in.signalSem] += 1;
    }
    e.busy = false;
    if (isDma(slot)) {
      e.leader = nullptr;
      for (CoreState &other : cores) // followers finish with their leader
        for (int s : {kDma, kSecondDma})
          if (other.engines[s].leader == &e)
            other.engines[s].leader = nullptr;
    }
    if (e.cur.kernel >= 0)
      stats.kernelCycles[e.cur.kernel] = now - kernelStart[e.cur.kernel];
    if (tracing) {
      static const char *engines[] = {"control", "dma", "pt", "sfu"};
      double us = 1e6 / arch.clockHz;
      trace << (firstEvent ? "" : ",\n") << R"({"name":")" << nameOf(in) << R"(","cat":")"
            << engines[engineOfSlot(slot)] << R"(","ph":"X","ts":)" << e.start * us
            << R"(,"dur":)" << (now - e.start) * us << R"(,"pid":)" << id << R"(,"tid":)" << slot
            << R"(,"args":{"pc":)" << e.cur.pc << R"(,"kernel":)" << e.cur.kernel << "}}";
      firstEvent = false;
    }
  }

  std::string deadlockReport() const {
    std::ostringstream os;
    os << "deadlock at cycle " << now << ":";
    for (uint32_t id = 0; id < cores.size(); ++id) {
      const CoreState &c = cores[id];
      if (c.finished)
        continue;
      os << "\n  core " << id << ":";
      if (c.atBarrier)
        os << " waits at a barrier";
      for (int i = 1; i < kNumEngines; ++i) {
        const EngineState &e = c.engines[i];
        if (!e.busy && !e.queue.empty()) {
          const Instr &in = e.queue.front().in;
          os << " instruction " << e.queue.front().pc << " waits for semaphore "
             << int(in.waitSem) << " >= " << in.waitCount << " (it is "
             << c.sems[in.waitSem] << ")";
        }
      }
    }
    return os.str();
  }

  void releaseBarrier() {
    bool anyWaiting = false, allWaiting = true;
    for (const CoreState &c : cores) {
      anyWaiting |= c.atBarrier;
      if (!c.atBarrier && !(c.streamDone && c.idle()))
        allWaiting = false;
    }
    if (!anyWaiting || !allWaiting)
      return;
    for (const CoreState &c : cores)
      if (!c.atBarrier)
        throw Error("barrier mismatch: a core finished while others wait at a barrier");
    // The release travels half way round the ring.
    double release = now + arch.ringHopLatencyCycles * (program.numCores / 2);
    for (CoreState &c : cores) {
      c.atBarrier = false;
      c.blockedUntil = release;
    }
  }

  RunStats run(bool withTrace) {
    tracing = withTrace;
    // Enough digits that an instruction ends within its kernel's simulated
    // time (the default 6 lose a nanosecond by 10 us).
    trace.precision(12);
    prepare();
    while (true) {
      bool changed = true;
      while (changed) {
        changed = false;
        for (uint32_t id = 0; id < cores.size(); ++id)
          changed |= issue(id);
        releaseBarrier();
        for (uint32_t id = 0; id < cores.size(); ++id)
          for (int slot = 1; slot < kSlots; ++slot) {
            CoreState &c = cores[id];
            const std::deque<Issued> &queue = c.engines[engineOfSlot(slot)].queue;
            if (!c.engines[slot].busy && !queue.empty() && ready(c, queue.front()) &&
                (!isDma(slot) || mayStartDma(c, slot))) {
              start(id, slot);
              changed = true;
            }
          }
        for (uint32_t id = 0; id < cores.size(); ++id) {
          CoreState &c = cores[id];
          if (!c.finished && c.streamDone && c.idle()) {
            c.finished = true;
            stats.coreCycles[id] = now;
          }
        }
      }
      if (std::all_of(cores.begin(), cores.end(), [](const CoreState &c) { return c.finished; }))
        break;
      shareBus(); // the rates until the next event
      double next = nextEvent();
      if (next == kNever)
        throw Error(deadlockReport());
      advance(next);
      std::vector<std::pair<uint32_t, int>> finished;
      for (uint32_t id = 0; id < cores.size(); ++id)
        for (int slot = 1; slot < kSlots; ++slot)
          if (cores[id].engines[slot].busy && done(cores[id], slot))
            finished.push_back({id, slot});
      completeAll(finished);
    }
    stats.cycles = 0;
    for (double t : stats.coreCycles)
      stats.cycles = std::max(stats.cycles, t);
    for (const auto &[kernel, bus] : kernelBus) {
      stats.busReadBytes += bus.read;
      stats.busWriteBytes += bus.written;
    }
    if (tracing)
      stats.traceJson = "{\"traceEvents\":[\n" + trace.str() + "\n],\"displayTimeUnit\":\"ns\"}\n";
    return std::move(stats);
  }
};

Simulator::Simulator(Arch arch, uint64_t maxHostBytes)
    : arch_(std::move(arch)), maxHostBytes_(maxHostBytes), impl_(std::make_unique<Impl>(arch_)) {
  // Cores' matmuls already run in parallel (OpenMP); nested BLAS threads
  // would only compete with them.
  openblas_set_num_threads(1);
}
Simulator::~Simulator() = default;

void Simulator::load(Program program) {
  if (program.archFingerprint != arch_.fingerprint())
    throw Error("program was built for another architecture description");
  impl_->lxHighWater = program.validate(arch_);
  uint64_t own = 0;
  for (const Buffer &b : program.buffers)
    if (b.kind == BufferKind::scratch || b.kind == BufferKind::constant)
      own += b.bytes;
  if (own > maxHostBytes_)
    throw Error("the program's scratch and constant buffers need " + std::to_string(own) +
                " bytes; the simulator may use " + std::to_string(maxHostBytes_) +
                " (raise max_host_bytes)");
  impl_->program = std::move(program);
  impl_->bound.assign(impl_->program.buffers.size(), nullptr);
  impl_->loaded = true;
}

const Program &Simulator::program() const { return impl_->program; }

void Simulator::bind(uint32_t index, void *data, size_t bytes) {
  if (!impl_->loaded)
    throw Error("no program loaded");
  if (index >= impl_->program.buffers.size())
    throw Error("no buffer " + std::to_string(index));
  const Buffer &b = impl_->program.buffers[index];
  if (b.kind == BufferKind::constant)
    throw Error("constant buffer '" + b.name + "' cannot be bound");
  if (bytes != b.bytes)
    throw Error("buffer '" + b.name + "' needs " + std::to_string(b.bytes) + " bytes, got " +
                std::to_string(bytes));
  impl_->bound[index] = data;
}

RunStats Simulator::run(bool trace) {
  if (!impl_->loaded)
    throw Error("no program loaded");
  return impl_->run(trace);
}


} // namespace spyre
