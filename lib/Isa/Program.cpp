//===- Program.cpp - binary format and static validation ------------------===//

#include "spyre-mlir/Isa/Program.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

namespace spyre {
using namespace isa;

namespace {

template <typename T> void append(std::vector<uint8_t> &out, const T &value) {
  const auto *p = reinterpret_cast<const uint8_t *>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

template <typename T> T readAt(const uint8_t *data, size_t size, uint64_t offset,
                               const char *what) {
  if (offset > size || size - offset < sizeof(T))
    throw Error(std::string("corrupt program: ") + what + " lies outside the file");
  T value;
  std::memcpy(&value, data + offset, sizeof(T));
  return value;
}

/// Whether `s` is well-formed UTF-8 (names are; Python reads them as str).
bool isUtf8(const std::string &s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > n)
      return false;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80)
        return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    static const uint32_t minOf[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minOf[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false; // overlong, beyond Unicode, or a surrogate
    i += len;
  }
  return true;
}

uint32_t crcOf(const uint8_t *data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; feed large files in pieces.
  while (size > 0) {
    uInt chunk = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

} // namespace

std::vector<uint8_t> Program::serialize() const {
  std::vector<uint8_t> strings, buffersSec, constants, code;
  append<uint32_t>(buffersSec, buffers.size());
  append<uint32_t>(buffersSec, 0);
  for (const Buffer &b : buffers) {
    BufferDesc d{};
    d.name = strings.size();
    strings.insert(strings.end(), b.name.begin(), b.name.end());
    strings.push_back(0);
    d.kind = static_cast<uint32_t>(b.kind);
    d.dtype = static_cast<uint8_t>(b.dtype);
    d.hostDType = static_cast<uint32_t>(b.hostDType);
    d.rank = b.dims.size();
    for (size_t i = 0; i < b.dims.size() && i < kMaxRank; ++i)
      d.dims[i] = b.dims[i];
    d.bytes = b.bytes;
    d.constOffset = constants.size();
    constants.insert(constants.end(), b.constant.begin(), b.constant.end());
    append(buffersSec, d);
  }
  append<uint32_t>(code, streams.size());
  append<uint32_t>(code, 0);
  uint64_t instrOffset = 8 + streams.size() * sizeof(StreamDesc);
  for (const Stream &s : streams) {
    append(code, StreamDesc{s.core, static_cast<uint32_t>(s.instrs.size()), instrOffset});
    instrOffset += s.instrs.size() * sizeof(Instr);
  }
  for (const Stream &s : streams)
    for (const Instr &i : s.instrs)
      append(code, i);

  const std::vector<std::pair<SectionKind, const std::vector<uint8_t> *>> sections = {
      {SectionKind::strings, &strings}, {SectionKind::buffers, &buffersSec},
      {SectionKind::constants, &constants}, {SectionKind::code, &code}};
  std::vector<uint8_t> out(sizeof(FileHeader));
  uint64_t offset = sizeof(FileHeader) + sections.size() * sizeof(SectionEntry);
  for (auto &[kind, bytes] : sections) {
    append(out, SectionEntry{static_cast<uint32_t>(kind), 0, offset, bytes->size()});
    offset += bytes->size();
  }
  for (auto &[kind, bytes] : sections)
    out.insert(out.end(), bytes->begin(), bytes->end());

  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof h.magic);
  h.version = kFormatVersion;
  h.headerBytes = sizeof(FileHeader);
  h.fileBytes = out.size();
  h.numSections = sections.size();
  h.archFingerprint = archFingerprint;
  h.numCores = numCores;
  h.crc32 = crcOf(out.data() + sizeof(FileHeader), out.size() - sizeof(FileHeader));
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

Program Program::parse(const uint8_t *data, size_t size) {
  auto h = readAt<FileHeader>(data, size, 0, "the header");
  if (std::memcmp(h.magic, kMagic, sizeof h.magic) != 0)
    throw Error("not a Spyre program (bad magic)");
  if (h.version != kFormatVersion)
    throw Error("unsupported program format version " + std::to_string(h.version) +
                " (this simulator reads version " + std::to_string(kFormatVersion) + ")");
  if (h.headerBytes != sizeof(FileHeader) || h.fileBytes != size)
    throw Error("corrupt program: header says " + std::to_string(h.fileBytes) +
                " bytes, the file has " + std::to_string(size));
  if (crcOf(data + sizeof(FileHeader), size - sizeof(FileHeader)) != h.crc32)
    throw Error("corrupt program: checksum mismatch");

  Program p;
  p.archFingerprint = h.archFingerprint;
  p.numCores = h.numCores;
  const uint8_t *sec[5] = {};
  uint64_t secBytes[5] = {};
  if (h.numSections > 16)
    throw Error("corrupt program: too many sections");
  for (uint32_t i = 0; i < h.numSections; ++i) {
    auto e = readAt<SectionEntry>(data, size, sizeof(FileHeader) + i * sizeof(SectionEntry),
                                  "the section table");
    if (e.kind < 1 || e.kind > 4 || sec[e.kind])
      throw Error("corrupt program: bad or repeated section kind " + std::to_string(e.kind));
    if (e.offset > size || e.bytes > size - e.offset)
      throw Error("corrupt program: a section lies outside the file");
    sec[e.kind] = data + e.offset;
    secBytes[e.kind] = e.bytes;
  }
  for (int k = 1; k <= 4; ++k)
    if (!sec[k])
      throw Error("corrupt program: missing section " + std::to_string(k));

  auto strings = sec[static_cast<int>(SectionKind::strings)];
  uint64_t stringBytes = secBytes[static_cast<int>(SectionKind::strings)];
  auto bufs = sec[static_cast<int>(SectionKind::buffers)];
  uint64_t bufBytes = secBytes[static_cast<int>(SectionKind::buffers)];
  auto consts = sec[static_cast<int>(SectionKind::constants)];
  uint64_t constBytes = secBytes[static_cast<int>(SectionKind::constants)];
  uint32_t numBuffers = readAt<uint32_t>(bufs, bufBytes, 0, "the buffer count");
  for (uint32_t i = 0; i < numBuffers; ++i) {
    auto d = readAt<BufferDesc>(bufs, bufBytes, 8 + i * sizeof(BufferDesc), "a buffer");
    Buffer b;
    if (d.name >= stringBytes)
      throw Error("corrupt program: buffer name outside the string table");
    const char *name = reinterpret_cast<const char *>(strings + d.name);
    b.name.assign(name, strnlen(name, stringBytes - d.name));
    if (!isUtf8(b.name))
      throw Error("corrupt program: buffer " + std::to_string(i) + "'s name is not UTF-8");
    if (d.kind > static_cast<uint32_t>(BufferKind::constant) || d.dtype >= kNumDTypes ||
        d.hostDType >= kNumHostDTypes || d.rank > kMaxRank)
      throw Error("corrupt program: buffer '" + b.name + "' has an invalid kind, type or rank");
    b.kind = static_cast<BufferKind>(d.kind);
    b.dtype = static_cast<DType>(d.dtype);
    b.hostDType = static_cast<HostDType>(d.hostDType);
    b.dims.assign(d.dims, d.dims + d.rank);
    b.bytes = d.bytes;
    if (b.kind == BufferKind::constant) {
      if (d.constOffset > constBytes || d.bytes > constBytes - d.constOffset)
        throw Error("corrupt program: data of constant '" + b.name + "' outside the file");
      b.constant.assign(consts + d.constOffset, consts + d.constOffset + d.bytes);
    }
    p.buffers.push_back(std::move(b));
  }

  auto code = sec[static_cast<int>(SectionKind::code)];
  uint64_t codeBytes = secBytes[static_cast<int>(SectionKind::code)];
  uint32_t numStreams = readAt<uint32_t>(code, codeBytes, 0, "the stream count");
  if (numStreams > 4096)
    throw Error("corrupt program: too many instruction streams");
  for (uint32_t i = 0; i < numStreams; ++i) {
    auto s = readAt<StreamDesc>(code, codeBytes, 8 + i * sizeof(StreamDesc), "a stream");
    if (s.offset > codeBytes || s.numInstrs > (codeBytes - s.offset) / sizeof(Instr))
      throw Error("corrupt program: the instructions of stream " + std::to_string(i) +
                  " lie outside the code section");
    Stream stream;
    stream.core = s.core;
    stream.instrs.resize(s.numInstrs);
    if (s.numInstrs)
      std::memcpy(stream.instrs.data(), code + s.offset, s.numInstrs * sizeof(Instr));
    p.streams.push_back(std::move(stream));
  }
  return p;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

int64_t budget::vectorUnits(const Instr &in) {
  // Measured (ns per element): add 2.8, mul 2.9, div 3.2, max 2.8, abs 1.9,
  // sqrt 1.7, floor 2.6, cos 2.6, round 3.3; erf 4.7, erfc 4.6, sin 3.8,
  // log 4.1, log2 4.3, log10 5.8, exp 5.7, exp2 5.6, pow 6.0, atan 6.1, asin
  // 4.3, acos 3.6, atanh 4.5; log1p 8.1, expm1 8.0, cosh 8.8; fmod 10.7,
  // atan2 11.5, tan 13.5, tanh 14.1, sinh 14.0, asinh 14.0.
  constexpr int64_t dearest = 5;
  switch (static_cast<Opcode>(in.opcode)) {
  case Opcode::unary: {
    using U = UnaryFunc;
    switch (static_cast<U>(in.func)) {
    case U::copy: case U::neg: case U::abs: case U::sqrt: case U::rsqrt: case U::floor:
    case U::ceil: case U::round: case U::trunc: case U::sign: case U::reciprocal: case U::relu:
    case U::logical_not: case U::bitwise_not: case U::isnan: case U::isinf: case U::signbit:
    case U::cos:
      return 1;
    case U::exp: case U::exp2: case U::log: case U::log2: case U::log10: case U::erf:
    case U::erfc: case U::sin: case U::atan: case U::asin: case U::acos: case U::atanh:
      return 2;
    case U::log1p: case U::expm1: case U::cosh:
      return 3;
    default: // tanh, sinh, asinh, tan, and those not measured (lgamma, sigmoid, acosh)
      return dearest;
    }
  }
  case Opcode::binary: {
    using B = BinaryFunc;
    switch (static_cast<B>(in.func)) {
    case B::add: case B::sub: case B::mul: case B::div: case B::max: case B::min: case B::eq:
    case B::ne: case B::lt: case B::le: case B::gt: case B::ge: case B::logical_and:
    case B::logical_or: case B::logical_xor: case B::bitwise_and: case B::bitwise_or:
    case B::bitwise_xor: case B::shl: case B::shr: case B::copysign:
      return 1;
    case B::pow:
      return 2;
    default: // fmod, atan2, and those not measured (mod, floordiv, hypot, ...)
      return dearest;
    }
  }
  case Opcode::select: case Opcode::fill:
    return 1;
  case Opcode::reduce:
    // sum 1 ns (measured earlier); welford not measured.
    return static_cast<ReduceFunc>(in.func) == ReduceFunc::welford ? dearest : 1;
  default:
    return dearest;
  }
}

namespace {

using i128 = __int128;

std::string where(uint32_t core, size_t pc) {
  return "core " + std::to_string(core) + ", instruction " + std::to_string(pc) + ": ";
}

/// Byte range [lo, hi) touched by a view of `counts[i]` steps of
/// `strides[i]` bytes plus `tailBytes`, relative to the view's base.
struct Range {
  i128 lo = 0, hi = 0;
};

Range viewRange(std::initializer_list<std::pair<int64_t, int64_t>> countsStrides,
                int64_t tailBytes) {
  Range r;
  for (auto [count, stride] : countsStrides) {
    i128 reach = static_cast<i128>(count - 1) * stride;
    if (reach < 0)
      r.lo += reach;
    else
      r.hi += reach;
  }
  r.hi += tailBytes;
  return r;
}

class Validator {
public:
  Validator(const Program &p, const Arch &arch) : p(p), arch(arch) {}

  std::vector<int64_t> run() {
    // The header's core count sizes per-core state: check it before
    // allocating anything by it (a hostile count would ask for gigabytes).
    if (p.numCores == 0 || p.numCores > static_cast<uint64_t>(arch.cores))
      throw Error("program is for " + std::to_string(p.numCores) +
                  " cores; the card has " + std::to_string(arch.cores));
    lxHighWater.assign(p.numCores, 0);
    for (const Buffer &b : p.buffers) {
      i128 elems = 1;
      for (int64_t d : b.dims) {
        if (d < 0)
          throw Error("buffer '" + b.name + "' has a negative dimension");
        elems *= d;
        if (elems > (static_cast<i128>(1) << 48))
          throw Error("buffer '" + b.name + "' is too large");
      }
      if (elems * dtypeBytes(b.dtype) != static_cast<i128>(b.bytes))
        throw Error("buffer '" + b.name + "' size does not match its shape");
      if (b.bytes > static_cast<uint64_t>(arch.usableDeviceBytes))
        throw Error("buffer '" + b.name + "' exceeds the card's device memory");
    }
    std::set<uint32_t> cores;
    for (const Stream &s : p.streams) {
      if (s.core >= p.numCores || !cores.insert(s.core).second)
        throw Error("stream for core " + std::to_string(s.core) +
                    " is out of range or repeated");
      validateStream(s);
    }
    return lxHighWater;
  }

private:
  void validateStream(const Stream &s) {
    current = s.core;
    std::vector<int64_t> trips; // innermost last
    i128 repeat = 1;            // iterations of the current loop nest
    for (size_t pc = 0; pc < s.instrs.size(); ++pc) {
      const Instr &in = s.instrs[pc];
      std::string at = where(s.core, pc);
      auto op = static_cast<Opcode>(in.opcode);
      if (in.flags & ~kAllFlags)
        throw Error(at + "unknown flags");
      if ((in.waitSem != kNoSem && in.waitSem >= kNumSems) ||
          (in.signalSem != kNoSem && in.signalSem >= kNumSems))
        throw Error(at + "semaphore out of range");
      // Before any product of shape values, which could overflow otherwise.
      for (int64_t v : in.shape)
        if (v < 0 || v > (int64_t{1} << 32))
          throw Error(at + "shape value out of range");
      // The instruction runs `repeat` times; charge its work to the budget
      // before anything else can multiply it.
      spend(Work{1, 0, 0, 0, 0, 0}, repeat, at);
      spend(checkWork(in, at), repeat, at);
      switch (op) {
      case Opcode::nop: case Opcode::kernel: case Opcode::barrier:
        break;
      case Opcode::loop:
        if (trips.size() == static_cast<size_t>(kMaxLoopDepth))
          throw Error(at + "hardware loops nest deeper than " + std::to_string(kMaxLoopDepth));
        trips.push_back(in.shape[0]);
        repeat = product(trips);
        break;
      case Opcode::loop_end:
        if (trips.empty())
          throw Error(at + "loop_end without loop");
        trips.pop_back();
        repeat = product(trips);
        break;
      case Opcode::dma: case Opcode::ring:
        checkDma(in, at, trips, s.core);
        break;
      case Opcode::gather: case Opcode::scatter:
        checkGather(in, at, trips);
        break;
      case Opcode::matmul:
        checkMatmul(in, at, trips);
        break;
      case Opcode::unary: case Opcode::binary: case Opcode::select:
      case Opcode::fill: case Opcode::reduce:
        checkVector(in, at, trips);
        break;
      default:
        throw Error(at + "unknown opcode " + std::to_string(in.opcode));
      }
    }
    if (!trips.empty())
      throw Error("core " + std::to_string(s.core) + ": loop without loop_end");
  }

  static i128 product(const std::vector<int64_t> &trips) {
    i128 p = 1;
    for (int64_t t : trips)
      p *= t;
    return p;
  }

  /// What one execution of an instruction asks of the simulator's host.
  struct Work {
    i128 instructions, rows, bytes, vectorElements, matrixElements, macs;
  };

  /// Rejects single instructions whose work exceeds the simulator limits;
  /// returns the work of one execution. Shape values are in [0, 2^32].
  Work checkWork(const Instr &in, const std::string &at) {
    const int64_t *sh = in.shape;
    auto limit = [&](i128 work, int64_t max, const char *what) {
      if (work > max)
        throw Error(at + what + " exceed the simulator limit of " + std::to_string(max));
    };
    Work w{0, 0, 0, 0, 0, 0};
    switch (static_cast<Opcode>(in.opcode)) {
    case Opcode::dma: case Opcode::ring: {
      i128 rows = static_cast<i128>(sh[1]) * sh[2] * sh[3];
      limit(rows, kMaxRowsPerTransfer, "the rows of this transfer");
      limit(rows * sh[0], kMaxBytesPerTransfer, "the bytes of this transfer");
      if (sh[0] > 0) // the simulator skips a transfer of empty rows
        w.rows = rows, w.bytes = rows * sh[0];
      break;
    }
    case Opcode::gather: case Opcode::scatter:
      limit(sh[1], kMaxRowsPerTransfer, "the rows of this transfer");
      limit(static_cast<i128>(sh[1]) * sh[0], kMaxBytesPerTransfer, "the bytes of this transfer");
      if (sh[0] > 0)
        w.rows = sh[1], w.bytes = static_cast<i128>(sh[1]) * sh[0];
      break;
    case Opcode::matmul: {
      i128 m = sh[0], k = sh[1], n = sh[2];
      limit(m * k * n, kMaxMacsPerMatmul, "the MACs of this matmul");
      limit(m * n, kMaxElementsPerVectorOp, "the outputs of this matmul");
      if (m > 0 && n > 0) // operands decoded, results encoded, products summed
        w.matrixElements = m * k + k * n + m * n, w.macs = m * k * n;
      break;
    }
    case Opcode::unary: case Opcode::binary: case Opcode::select: case Opcode::fill:
    case Opcode::reduce: {
      i128 elements = static_cast<i128>(sh[0]) * std::max<int64_t>(sh[1], 1);
      limit(elements, kMaxElementsPerVectorOp, "the elements of this vector operation");
      w.vectorElements = elements * budget::vectorUnits(in);
      break;
    }
    default:
      break;
    }
    return w;
  }

  /// Adds `times` executions of `w` to the program's work and refuses the
  /// program once it exceeds the budget (Program.h): the sum over the kinds
  /// of work of the fraction of each one's limit must stay <= 1.
  void spend(const Work &w, i128 times, const std::string &at) {
    if (times == 0)
      return;
    // `times` is at most the instruction limit here (the instruction itself
    // was charged first) and each kind of work per instruction at most 2^64:
    // no product overflows.
    spent.instructions += w.instructions * times;
    spent.rows += w.rows * times;
    spent.bytes += w.bytes * times;
    spent.vectorElements += w.vectorElements * times;
    spent.matrixElements += w.matrixElements * times;
    spent.macs += w.macs * times;
    struct Kind {
      i128 used;
      int64_t limit;
      const char *what;
    };
    const Kind kinds[] = {
        {spent.instructions, budget::kInstructions, "instructions"},
        {spent.rows, budget::kTransferRows, "transfer rows"},
        {spent.bytes, budget::kTransferBytes, "bytes transferred"},
        {spent.vectorElements, budget::kVectorUnits, "vector-element units"},
        {spent.matrixElements, budget::kMatrixElements, "matrix operand and result elements"},
        {spent.macs, budget::kMacs, "MACs"}};
    long double fraction = 0;
    for (const Kind &k : kinds)
      fraction += static_cast<long double>(k.used) / k.limit;
    if (fraction <= 1)
      return;
    std::ostringstream os;
    os << at << "the program executes more than the simulator's work budget allows "
          "(docs/binary-format.md, \"Work limits\"): by this instruction,";
    const char *sep = " ";
    for (const Kind &k : kinds) {
      if (k.used == 0)
        continue;
      os << sep << (k.used > (static_cast<i128>(1) << 100) ? std::string("more than 2^100")
                                                            : toString(k.used))
         << " " << k.what << " (" << static_cast<int>(std::min<long double>(
                                             100 * static_cast<long double>(k.used) / k.limit,
                                             1e9L))
         << "% of " << k.limit << ")";
      sep = ", ";
    }
    throw Error(os.str());
  }

  static std::string toString(i128 v) {
    if (v == 0)
      return "0";
    std::string digits;
    for (; v > 0; v /= 10)
      digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    return digits;
  }

  /// Checks an operand's kind and that [lo, hi) around its address stays in
  /// its memory for every iteration of the enclosing loops.
  void checkOperand(const Instr &in, int index, Range extent, const std::string &at,
                    const std::vector<int64_t> &trips, bool written, bool lxOnly = false) {
    const Operand &o = in.ops[index];
    std::string name = at + "operand " + std::to_string(index);
    if (o.dtype >= kNumDTypes)
      throw Error(name + " has an invalid element type");
    if (lxOnly && o.buffer != kLx)
      throw Error(name + " must be in LX");
    i128 size;
    if (o.buffer == kLx) {
      size = arch.lxUsableBytes();
    } else {
      if (o.buffer >= p.buffers.size())
        throw Error(name + " names buffer " + std::to_string(o.buffer) + " of " +
                    std::to_string(p.buffers.size()));
      const Buffer &b = p.buffers[o.buffer];
      if (written && b.kind == BufferKind::constant)
        throw Error(name + " writes constant buffer '" + b.name + "'");
      size = b.bytes;
    }
    if (extent.hi <= extent.lo)
      return; // nothing accessed
    i128 lo = static_cast<i128>(o.offset) + extent.lo;
    i128 hi = static_cast<i128>(o.offset) + extent.hi;
    for (size_t l = 0; l < trips.size() && l < 3; ++l) {
      int64_t trip = trips[trips.size() - 1 - l];
      if (trip == 0)
        return; // the loop never runs
      i128 reach = static_cast<i128>(o.loopInc[l]) * (trip - 1);
      (reach < 0 ? lo : hi) += reach;
    }
    if (o.buffer == kLx && lo >= 0 && hi <= size) {
      uint32_t core = static_cast<Opcode>(in.opcode) == Opcode::ring && index == 0 ? o.core : current;
      if (core < lxHighWater.size())
        lxHighWater[core] = std::max<int64_t>(lxHighWater[core], static_cast<int64_t>(hi));
    }
    if (lo < 0 || hi > size) {
      std::ostringstream os;
      os << name << " accesses bytes [" << static_cast<long long>(lo) << ", "
         << static_cast<long long>(hi) << ") of "
         << (o.buffer == kLx ? std::string("LX") : "buffer '" + p.buffers[o.buffer].name + "'")
         << " of " << static_cast<long long>(size) << " bytes";
      throw Error(os.str());
    }
  }

  void checkDma(const Instr &in, const std::string &at, const std::vector<int64_t> &trips,
                uint32_t core) {
    for (int i : {0, 1}) {
      auto [lo, hi] = transferReach<i128>(in, i);
      Range r{lo, hi};
      bool ring = static_cast<Opcode>(in.opcode) == Opcode::ring;
      checkOperand(in, i, r, at, trips, /*written=*/i == 0, /*lxOnly=*/ring);
    }
    if (static_cast<Opcode>(in.opcode) == Opcode::ring &&
        (in.ops[0].core >= p.numCores || in.ops[0].core == core))
      throw Error(at + "ring destination core " + std::to_string(in.ops[0].core) +
                  " is invalid");
  }

  /// A gather's rows (ops[0]) and table (ops[1]); a scatter's table (ops[0])
  /// and rows (ops[1]). Either way ops[2] holds the i32 indices in LX.
  void checkGather(const Instr &in, const std::string &at, const std::vector<int64_t> &trips) {
    int64_t row = in.shape[0], n = in.shape[1], tableRows = in.shape[2];
    bool empty = row == 0 || n == 0;
    bool scatter = static_cast<Opcode>(in.opcode) == Opcode::scatter;
    int rowsAt = scatter ? 1 : 0, tableAt = scatter ? 0 : 1;
    checkOperand(in, rowsAt, empty ? Range{} : viewRange({{n, in.ops[rowsAt].stride[0]}}, row),
                 at, trips, /*written=*/!scatter);
    checkOperand(in, tableAt,
                 empty || tableRows == 0
                     ? Range{}
                     : viewRange({{tableRows, in.ops[tableAt].stride[0]}}, row),
                 at, trips, /*written=*/scatter);
    if (static_cast<DType>(in.ops[2].dtype) != DType::i32)
      throw Error(at + (scatter ? "scatter" : "gather") + " indices must be i32");
    checkOperand(in, 2, empty ? Range{} : Range{0, static_cast<i128>(n) * 4}, at, trips, false,
                 /*lxOnly=*/true);
  }

  void checkMatmul(const Instr &in, const std::string &at, const std::vector<int64_t> &trips) {
    int64_t m = in.shape[0], k = in.shape[1], n = in.shape[2];
    auto matrix = [&](int index, int64_t rows, int64_t cols, bool written) {
      const Operand &o = in.ops[index];
      int64_t e = o.dtype < kNumDTypes ? dtypeBytes(static_cast<DType>(o.dtype)) : 1;
      bool empty = rows == 0 || cols == 0;
      checkOperand(in, index, empty ? Range{} : viewRange({{rows, o.stride[0]}, {cols, e}}, e), at,
                   trips, written, /*lxOnly=*/true);
    };
    for (int i = 0; i < 3; ++i)
      if (in.ops[i].stride[0] < 0)
        throw Error(at + "matmul row strides must not be negative");
    bool ta = in.flags & kTransposeA, tb = in.flags & kTransposeB;
    matrix(1, ta ? k : m, ta ? m : k, false);
    matrix(2, tb ? n : k, tb ? k : n, false);
    matrix(0, m, n, true);
    for (int i : {1, 2}) {
      auto t = static_cast<DType>(in.ops[i].dtype);
      if (t != DType::dl16 && t != DType::f32)
        throw Error(at + "matmul inputs must be dl16 or f32");
    }
    auto t = static_cast<DType>(in.ops[0].dtype);
    if (t != DType::dl16 && t != DType::f32)
      throw Error(at + "matmul output must be dl16 or f32");
  }

  void checkVector(const Instr &in, const std::string &at, const std::vector<int64_t> &trips) {
    auto op = static_cast<Opcode>(in.opcode);
    int64_t rows = in.shape[0], cols = in.shape[1];
    auto view = [&](int index, int64_t r, int64_t c, bool written) {
      const Operand &o = in.ops[index];
      int64_t e = o.dtype < kNumDTypes ? dtypeBytes(static_cast<DType>(o.dtype)) : 1;
      bool empty = r == 0 || c == 0;
      checkOperand(in, index, empty ? Range{} : viewRange({{r, o.stride[0]}, {c, o.stride[1]}}, e),
                   at, trips, written, /*lxOnly=*/true);
    };
    unsigned limit = 0;
    ElementOperands views = elementOperands(in);
    if (op != Opcode::reduce)
      for (int i = views.first; i < views.end; ++i)
        view(i, rows, cols, i == 0);
    switch (op) {
    case Opcode::unary:
      limit = static_cast<unsigned>(UnaryFunc::count_);
      break;
    case Opcode::binary:
      limit = static_cast<unsigned>(BinaryFunc::count_);
      break;
    case Opcode::select:
      limit = 1;
      break;
    case Opcode::fill:
      limit = static_cast<unsigned>(FillFunc::count_);
      break;
    default: { // reduce: one value per row
      limit = static_cast<unsigned>(ReduceFunc::count_);
      auto kind = static_cast<ReduceFunc>(in.func);
      view(1, rows, cols, false);
      view(0, rows, 1, true);
      if (kind == ReduceFunc::welford) {
        view(2, rows, 1, true);
        view(3, rows, 1, true);
      } else if ((kind == ReduceFunc::argmax || kind == ReduceFunc::argmin)) {
        if (static_cast<DType>(in.ops[0].dtype) != DType::i32)
          throw Error(at + "argmax/argmin write i32 positions");
        if (in.flags & kAccumulate)
          view(2, rows, 1, true); // running extreme values
      }
    }
    }
    if (in.func >= limit)
      throw Error(at + "unknown function " + std::to_string(in.func) + " for this opcode");
  }

  const Program &p;
  const Arch &arch;
  std::vector<int64_t> lxHighWater;
  uint32_t current = 0;
  Work spent{0, 0, 0, 0, 0, 0}; // by the whole program, so far
};

} // namespace

std::vector<int64_t> Program::validate(const Arch &arch) const {
  return Validator(*this, arch).run();
}

std::string Program::check(const Arch &arch) const noexcept {
  try {
    validate(arch);
    return {};
  } catch (const std::exception &e) {
    return e.what();
  }
}

} // namespace spyre
