//===- SimulatorModule.cpp - pybind11 bindings of the simulator -----------===//
//
// spyre_mlir._simulator: the architecture description, the program builder,
// binaries and the simulator. Arrays bind without copies through the buffer
// protocol; runs release the GIL. python/spyre_mlir/simulator.py adds the
// numpy-level conveniences.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/Isa/DLFloat16.h"
#include "spyre-mlir/Isa/ProgramBuilder.h"
#include "spyre-mlir/Simulator/Collectives.h"
#include "spyre-mlir/Simulator/Simulator.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <memory>

namespace py = pybind11;
using namespace spyre;
using namespace spyre::isa;

namespace {

/// Python exception types; set in the module init.
PyObject *programError = nullptr;
PyObject *simulationError = nullptr;

template <typename F> auto asProgramError(F &&f) {
  try {
    return f();
  } catch (const Error &e) {
    PyErr_SetString(programError, e.what());
    throw py::error_already_set();
  }
}

py::dict countersDict(const Counters &c) {
  static const char *engines[] = {"control", "dma", "pt", "sfu"};
  py::dict d, eng;
  for (int i = 1; i < kNumEngines; ++i) {
    py::dict e;
    e["busy_cycles"] = c.engines[i].busyCycles;
    e["stall_cycles"] = c.engines[i].stallCycles;
    e["instructions"] = c.engines[i].instructions;
    eng[engines[i]] = e;
  }
  d["engines"] = eng;
  d["device_read_bytes"] = c.deviceReadBytes;
  d["device_write_bytes"] = c.deviceWriteBytes;
  d["ring_bytes"] = c.ringBytes;
  d["lx_read_bytes"] = c.lxReadBytes;
  d["lx_write_bytes"] = c.lxWriteBytes;
  d["macs"] = c.macs;
  d["vector_ops"] = c.vectorOps;
  d["overflows"] = c.dlfloat16Overflows;
  return d;
}

/// A DLFloat16 format and its IEEE fp16 -> DLFloat16 table: a pure function
/// of 16 bits, tabulated once per format (building both per call took longer
/// than converting a decode step's activations).
struct Dl16Format {
  Dl16Format(int64_t exponentBits, int64_t fractionBits)
      : dl(static_cast<int>(exponentBits), static_cast<int>(fractionBits)) {
    fromHalf.resize(1 << 16);
    for (uint32_t h = 0; h < (1u << 16); ++h) {
      // Widen IEEE binary16 to binary32 exactly (subnormals included).
      uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
      if (e == 0x1f)
        u = sign | 0x7f800000u | (m << 13);
      else if (e != 0)
        u = sign | ((e + 112) << 23) | (m << 13);
      else if (m == 0)
        u = sign;
      else { // subnormal: normalise
        int shift = 0;
        while (!(m & 0x400u)) { m <<= 1; ++shift; }
        u = sign | ((113 - shift) << 23) | ((m & 0x3ffu) << 13);
      }
      float f;
      std::memcpy(&f, &u, 4);
      fromHalf[h] = dl.fromFloat(f);
    }
  }
  DLFloat16 dl;
  std::vector<uint16_t> fromHalf;
};

/// Called with the GIL held, which guards the map.
const Dl16Format &dl16Format(const Arch &arch) {
  static std::map<std::pair<int64_t, int64_t>, std::unique_ptr<Dl16Format>> formats;
  std::unique_ptr<Dl16Format> &f =
      formats[{arch.dlfloat16ExponentBits, arch.dlfloat16FractionBits}];
  if (!f)
    f = std::make_unique<Dl16Format>(arch.dlfloat16ExponentBits, arch.dlfloat16FractionBits);
  return *f;
}

/// The simulator plus the Python objects whose memory it uses.
struct PySimulator {
  PySimulator(const Arch &arch, uint64_t maxHostBytes) : sim(arch, maxHostBytes) {}
  Simulator sim;
  std::vector<py::object> keepAlive;
};

} // namespace

PYBIND11_MODULE(_simulator, m) {
  m.doc() = "Functional and timing simulator of the Spyre card";
  programError = PyErr_NewException("spyre_mlir._simulator.ProgramError", PyExc_ValueError, nullptr);
  simulationError = PyErr_NewException("spyre_mlir._simulator.SimulationError", PyExc_RuntimeError, nullptr);
  m.attr("ProgramError") = py::handle(programError);
  m.attr("SimulationError") = py::handle(simulationError);
  m.attr("LX") = kLx;
  m.attr("NUM_SEMAPHORES") = kNumSems;
  m.attr("FORMAT_VERSION") = kFormatVersion;

  py::enum_<DType>(m, "DType")
      .value("dl16", DType::dl16).value("f32", DType::f32).value("i32", DType::i32)
      .value("i8", DType::i8).value("u8", DType::u8);
  py::enum_<BufferKind>(m, "BufferKind")
      .value("input", BufferKind::input).value("output", BufferKind::output)
      .value("inout", BufferKind::inout).value("scratch", BufferKind::scratch)
      .value("constant", BufferKind::constant);
  py::enum_<HostDType>(m, "HostDType")
      .value("f16", HostDType::f16).value("bf16", HostDType::bf16).value("f32", HostDType::f32)
      .value("i32", HostDType::i32).value("i64", HostDType::i64).value("i8", HostDType::i8)
      .value("bool", HostDType::boolean);
  {
    py::enum_<UnaryFunc> e(m, "UnaryFunc");
    for (size_t i = 0; i < kUnaryFuncNames.size(); ++i)
      e.value(kUnaryFuncNames[i], static_cast<UnaryFunc>(i));
  }
  {
    py::enum_<BinaryFunc> e(m, "BinaryFunc");
    for (size_t i = 0; i < kBinaryFuncNames.size(); ++i)
      e.value(kBinaryFuncNames[i], static_cast<BinaryFunc>(i));
  }
  {
    py::enum_<ReduceFunc> e(m, "ReduceFunc");
    for (size_t i = 0; i < kReduceFuncNames.size(); ++i)
      e.value(kReduceFuncNames[i], static_cast<ReduceFunc>(i));
  }

  py::class_<Arch>(m, "Arch")
      .def_static("load", [](const std::string &path) {
        std::string error;
        std::optional<Arch> a = Arch::load(path, error);
        if (!a) throw py::value_error(error);
        return *a;
      }, py::arg("path"))
      .def_static("lookup_path", [](const std::string &path) { return Arch::lookupPath(path); },
                  py::arg("path") = "",
                  "The compiler's lookup of the description's file: `path` if not empty, "
                  "else $SPYRE_ARCH, else the one installed with the package.")
      .def_static("parse", [](const std::string &text) {
        std::string error;
        std::optional<Arch> a = Arch::parse(text, "<string>", error);
        if (!a) throw py::value_error(error);
        return *a;
      }, py::arg("text"))
      .def_readonly("name", &Arch::name)
      .def_readonly("cores", &Arch::cores)
      .def_readonly("clock_hz", &Arch::clockHz)
      .def_readonly("lx_bytes", &Arch::lxBytes)
      .def_readonly("lx_reserved_bytes", &Arch::lxReservedBytes)
      .def_readonly("stick_bytes", &Arch::stickBytes)
      .def_readonly("bandwidth_bytes_per_s", &Arch::bandwidthBytesPerS)
      .def_readonly("turnaround_s_per_byte", &Arch::turnaroundSPerByte)
      .def_readonly("dma_port_bytes_per_cycle", &Arch::dmaPortBytesPerCycle)
      .def_readonly("dma_duplex", &Arch::dmaDuplex)
      .def_readonly("port_cores", &Arch::portCores)
      .def_readonly("port_bytes_per_s", &Arch::portBytesPerS)
      .def_readonly("pt_feed_bytes_per_cycle", &Arch::ptFeedBytesPerCycle)
      .def_readonly("sfu_elementwise_per_cycle", &Arch::sfuElementwisePerCycle)
      .def_readonly("sfu_reduce_per_cycle", &Arch::sfuReducePerCycle)
      .def_readonly("dma_latency_cycles", &Arch::dmaLatencyCycles)
      .def_readonly("ring_bytes_per_cycle", &Arch::ringBytesPerCycle)
      .def_readonly("ring_hop_latency_cycles", &Arch::ringHopLatencyCycles)
      .def_readonly("link_bandwidth_bytes_per_s", &Arch::linkBandwidthBytesPerS)
      .def_readonly("link_latency_s", &Arch::linkLatencyS)
      .def_readonly("pt_startup_cycles", &Arch::ptStartupCycles)
      .def_readonly("sfu_startup_cycles", &Arch::sfuStartupCycles)
      .def_readonly("sfu_lx_bytes_per_cycle", &Arch::sfuLxBytesPerCycle)
      .def_readonly("sfu_transcendental_divisor", &Arch::sfuTranscendentalDivisor)
      .def_readonly("engine_queue_depth", &Arch::engineQueueDepth)
      .def_readonly("dlfloat16_exponent_bits", &Arch::dlfloat16ExponentBits)
      .def_readonly("dlfloat16_fraction_bits", &Arch::dlfloat16FractionBits)
      .def_property_readonly("macs_per_cycle", &Arch::macsPerCycle)
      .def("sfu_rate", &Arch::sfuRate, py::arg("lx_bytes_per_element"), py::arg("reduction"),
           py::arg("transcendental"),
           "Elements per cycle of one core's SFUs on an instruction streaming these LX bytes per element.")
      .def_property_readonly("device_bytes_per_cycle", &Arch::deviceBytesPerCycle)
      .def_property_readonly("port_bytes_per_cycle", &Arch::portBytesPerCycle)
      .def_property_readonly("memory_bytes_per_cycle", &Arch::memoryBytesPerCycle)
      .def_property_readonly("turnaround_cycles_per_byte", &Arch::turnaroundCyclesPerByte)
      .def("device_cycles", &Arch::deviceCycles, py::arg("read_bytes"), py::arg("write_bytes"),
           "Cycles the device-memory bus needs to read and write these bytes together.")
      .def_property_readonly("lx_usable_bytes", &Arch::lxUsableBytes)
      .def_property_readonly("peak_flops", &Arch::peakFlops)
      .def_property_readonly("fingerprint", &Arch::fingerprint);

  py::class_<OperandSpec>(m, "Operand")
      .def(py::init([](uint32_t buffer, DType dtype, int64_t offset,
                       std::array<int64_t, 3> strides, std::array<int64_t, 3> loopInc,
                       uint16_t core) {
             return OperandSpec{buffer, dtype, offset, strides, loopInc, core};
           }),
           py::arg("buffer") = kLx, py::arg("dtype") = DType::dl16, py::arg("offset") = 0,
           py::arg("strides") = std::array<int64_t, 3>{0, 0, 0},
           py::arg("loop_inc") = std::array<int64_t, 3>{0, 0, 0}, py::arg("core") = 0)
      .def_readwrite("buffer", &OperandSpec::buffer)
      .def_readwrite("dtype", &OperandSpec::dtype)
      .def_readwrite("offset", &OperandSpec::offset)
      .def_readwrite("strides", &OperandSpec::strides)
      .def_readwrite("loop_inc", &OperandSpec::loopInc)
      .def_readwrite("core", &OperandSpec::core);

  py::class_<Sync>(m, "Sync")
      .def(py::init([](std::optional<uint8_t> waitSem, int64_t waitCount,
                       std::array<int64_t, 3> waitInc, std::optional<uint8_t> signalSem) {
             return Sync{waitSem, waitCount, waitInc, signalSem};
           }),
           py::arg("wait_sem") = py::none(), py::arg("wait_count") = 0,
           py::arg("wait_inc") = std::array<int64_t, 3>{0, 0, 0},
           py::arg("signal_sem") = py::none());

  py::class_<Program>(m, "Program")
      .def_static("parse", [](py::bytes data) {
        std::string_view view = data;
        return asProgramError([&] {
          return Program::parse(reinterpret_cast<const uint8_t *>(view.data()), view.size());
        });
      }, py::arg("data"), "Parses a binary; raises ProgramError if it is malformed.")
      .def("serialize", [](const Program &p) {
        std::vector<uint8_t> bytes = p.serialize();
        return py::bytes(reinterpret_cast<const char *>(bytes.data()), bytes.size());
      })
      .def("validate", [](const Program &p, const Arch &arch) {
        return asProgramError([&] { return p.validate(arch); });
      }, py::arg("arch"), "Raises ProgramError if invalid; returns the LX bytes each core reaches.")
      .def_readonly("num_cores", &Program::numCores)
      .def_property_readonly("buffers", [](const Program &p) {
        py::list out;
        for (const Buffer &b : p.buffers) {
          py::dict d;
          d["name"] = b.name;
          d["kind"] = b.kind;
          d["dtype"] = b.dtype;
          d["host_dtype"] = b.hostDType;
          d["shape"] = b.dims;
          d["bytes"] = b.bytes;
          out.append(d);
        }
        return out;
      })
      .def_property_readonly("instruction_counts", [](const Program &p) {
        std::map<uint32_t, size_t> counts;
        for (const Stream &s : p.streams)
          counts[s.core] = s.instrs.size();
        return counts;
      });

  py::class_<StreamBuilder>(m, "StreamBuilder")
      .def("loop", &StreamBuilder::loop, py::arg("trips"))
      .def("end_loop", &StreamBuilder::endLoop)
      .def("barrier", &StreamBuilder::barrier)
      .def("kernel", &StreamBuilder::kernel, py::arg("id"))
      .def("nop", &StreamBuilder::nop)
      .def("dma", &StreamBuilder::dma, py::arg("dst"), py::arg("src"), py::arg("row_bytes"),
           py::arg("counts") = std::array<int64_t, 3>{1, 1, 1}, py::arg("sync") = Sync{})
      .def("ring", &StreamBuilder::ring, py::arg("dst"), py::arg("src"), py::arg("row_bytes"),
           py::arg("counts") = std::array<int64_t, 3>{1, 1, 1}, py::arg("signal_remote") = true,
           py::arg("sync") = Sync{})
      .def("gather", &StreamBuilder::gather, py::arg("dst"), py::arg("table"), py::arg("indices"),
           py::arg("row_bytes"), py::arg("count"), py::arg("table_rows"), py::arg("sync") = Sync{})
      .def("matmul", &StreamBuilder::matmul, py::arg("c"), py::arg("a"), py::arg("b"),
           py::arg("m"), py::arg("k"), py::arg("n"), py::arg("transpose_a") = false,
           py::arg("transpose_b") = false, py::arg("accumulate") = false, py::arg("sync") = Sync{})
      .def("unary", &StreamBuilder::unary, py::arg("func"), py::arg("dst"), py::arg("src"),
           py::arg("rows"), py::arg("cols"), py::arg("sync") = Sync{})
      .def("binary", &StreamBuilder::binary, py::arg("func"), py::arg("dst"), py::arg("a"),
           py::arg("b"), py::arg("rows"), py::arg("cols"), py::arg("sync") = Sync{})
      .def("binary_imm", &StreamBuilder::binaryImm, py::arg("func"), py::arg("dst"), py::arg("a"),
           py::arg("b"), py::arg("rows"), py::arg("cols"), py::arg("sync") = Sync{})
      .def("select", &StreamBuilder::select, py::arg("dst"), py::arg("cond"), py::arg("a"),
           py::arg("b"), py::arg("rows"), py::arg("cols"), py::arg("sync") = Sync{})
      .def("fill", &StreamBuilder::fill, py::arg("dst"), py::arg("value"), py::arg("rows"),
           py::arg("cols"), py::arg("sync") = Sync{})
      .def("iota", &StreamBuilder::iota, py::arg("dst"), py::arg("start"), py::arg("row_step"),
           py::arg("col_step"), py::arg("rows"), py::arg("cols"), py::arg("sync") = Sync{})
      .def("reduce", &StreamBuilder::reduce, py::arg("func"), py::arg("dst"), py::arg("src"),
           py::arg("rows"), py::arg("cols"), py::arg("accumulate") = false,
           py::arg("aux1") = OperandSpec{}, py::arg("aux2") = OperandSpec{},
           py::arg("index_offset") = 0.0, py::arg("sync") = Sync{})
      .def("raw", [](StreamBuilder &s, py::bytes record) {
        std::string_view view = record;
        if (view.size() != sizeof(Instr))
          throw py::value_error("an instruction record has " + std::to_string(sizeof(Instr)) + " bytes");
        Instr in;
        std::memcpy(&in, view.data(), sizeof in);
        return s.raw(in);
      }, py::arg("record"), "Appends raw instruction bytes (for tests of malformed programs).");
  m.attr("INSTRUCTION_BYTES") = sizeof(Instr);

  py::class_<ProgramBuilder>(m, "ProgramBuilder")
      .def(py::init<const Arch &, uint32_t>(), py::arg("arch"), py::arg("num_cores"))
      .def("add_buffer", [](ProgramBuilder &b, const std::string &name, BufferKind kind,
                            DType dtype, HostDType host, const std::vector<int64_t> &dims,
                            py::bytes constant) {
             std::string_view view = constant;
             return b.addBuffer(name, kind, dtype, host, dims,
                                std::vector<uint8_t>(view.begin(), view.end()));
           },
           py::arg("name"), py::arg("kind"), py::arg("dtype"), py::arg("host_dtype"),
           py::arg("shape"), py::arg("constant") = py::bytes())
      .def("core", &ProgramBuilder::core, py::arg("core"), py::keep_alive<0, 1>())
      .def("finish", &ProgramBuilder::finish);

  py::class_<PySimulator>(m, "Simulator")
      .def(py::init<const Arch &, uint64_t>(), py::arg("arch"),
           py::arg("max_host_bytes") = Simulator::kDefaultMaxHostBytes)
      .def("load", [](PySimulator &s, Program p) {
        asProgramError([&] { s.sim.load(std::move(p)); return 0; });
        s.keepAlive.assign(s.sim.program().buffers.size(), py::none());
      }, py::arg("program"))
      .def("bind", [](PySimulator &s, uint32_t index, py::buffer array) {
        py::buffer_info info = array.request(/*writable=*/true);
        int64_t expected = info.itemsize;
        for (py::ssize_t i = info.ndim - 1; i >= 0; --i) {
          if (info.shape[i] > 1 && info.strides[i] != expected)
            throw py::value_error("bind needs a C-contiguous array");
          expected *= info.shape[i];
        }
        asProgramError([&] {
          s.sim.bind(index, info.ptr, static_cast<size_t>(info.size * info.itemsize));
          return 0;
        });
        s.keepAlive.at(index) = array;
      }, py::arg("index"), py::arg("array"),
         "Binds a writable C-contiguous array to buffer `index` without copying.")
      .def("run", [](PySimulator &s, bool trace) {
        RunStats stats;
        {
          py::gil_scoped_release release;
          try {
            stats = s.sim.run(trace);
          } catch (const Error &e) {
            py::gil_scoped_acquire acquire;
            PyErr_SetString(simulationError, e.what());
            throw py::error_already_set();
          }
        }
        py::dict out;
        out["cycles"] = stats.cycles;
        out["core_cycles"] = stats.coreCycles;
        out["bus_read_bytes"] = stats.busReadBytes;
        out["bus_write_bytes"] = stats.busWriteBytes;
        py::list cores;
        for (const Counters &c : stats.cores)
          cores.append(countersDict(c));
        out["cores"] = cores;
        py::dict kernels;
        for (auto &[id, c] : stats.kernels) {
          py::dict d = countersDict(c);
          d["cycles"] = stats.kernelCycles[id];
          kernels[py::int_(id)] = d;
        }
        out["kernels"] = kernels;
        // Finite values that DLFloat16 rounding turned into infinities, all cores.
        int64_t overflows = 0;
        for (const Counters &c : stats.cores)
          overflows += c.dlfloat16Overflows;
        out["overflows"] = overflows;
        if (trace)
          out["trace"] = stats.traceJson;
        return out;
      }, py::arg("trace") = false, "Runs the program; releases the GIL while simulating.")
      .def_property_readonly("program", [](PySimulator &s) { return s.sim.program(); });

  py::enum_<Collective>(m, "Collective")
      .value("all_reduce", Collective::AllReduce)
      .value("all_gather", Collective::AllGather)
      .value("reduce_scatter", Collective::ReduceScatter)
      .value("broadcast", Collective::Broadcast)
      .value("all_to_all", Collective::AllToAll)
      .value("barrier", Collective::Barrier);
  m.def("collective_time", [](const Arch &arch, Collective kind, double bytes, int64_t cards) {
    CollectiveTime t;
    try {
      t = collectiveTime(arch, kind, bytes, cards);
    } catch (const std::invalid_argument &e) {
      throw py::value_error(e.what());
    }
    py::dict d;
    d["cycles"] = t.cycles;
    d["algorithm"] = std::string(t.algorithm);
    d["messages"] = t.messages;
    return d;
  }, py::arg("arch"), py::arg("kind"), py::arg("bytes"), py::arg("cards"),
     "Cycles of a collective over `cards` cards' links (Collectives.h): `bytes` is the "
     "whole tensor reduced, gathered into, scattered from, broadcast or sent to all.");

  m.def("dl16_from_f32", [](py::array_t<float, py::array::c_style | py::array::forcecast> x,
                            const Arch &arch) {
    const DLFloat16 &dl = dl16Format(arch).dl;
    py::array_t<uint16_t> out(x.request().shape);
    const float *src = x.data();
    uint16_t *dst = out.mutable_data();
    for (py::ssize_t i = 0; i < x.size(); ++i)
      dst[i] = dl.fromFloat(src[i]);
    return out;
  }, py::arg("values"), py::arg("arch"), "f32 values to DLFloat16 bit patterns (uint16).");
  m.def("dl16_from_f16", [](py::array_t<uint16_t, py::array::c_style | py::array::forcecast> x,
                            const Arch &arch) {
    const std::vector<uint16_t> &table = dl16Format(arch).fromHalf;
    py::array_t<uint16_t> out(x.request().shape);
    const uint16_t *src = x.data();
    uint16_t *dst = out.mutable_data();
    py::ssize_t n = x.size();
    {
      py::gil_scoped_release release;
      for (py::ssize_t i = 0; i < n; ++i)
        dst[i] = table[src[i]];
    }
    return out;
  }, py::arg("half_bits"), py::arg("arch"),
     "IEEE fp16 bit patterns (uint16) to DLFloat16 bit patterns (uint16).");
  m.def("dl16_to_f32", [](py::array_t<uint16_t, py::array::c_style | py::array::forcecast> x,
                          const Arch &arch) {
    const DLFloat16 &dl = dl16Format(arch).dl;
    py::array_t<float> out(x.request().shape);
    const uint16_t *src = x.data();
    float *dst = out.mutable_data();
    for (py::ssize_t i = 0; i < x.size(); ++i)
      dst[i] = dl.toFloat(src[i]);
    return out;
  }, py::arg("bits"), py::arg("arch"), "DLFloat16 bit patterns (uint16) to f32 values.");
}
