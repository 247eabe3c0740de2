//===- Isa.h - instruction set and binary format of the card --*- C++ -*-===//
//
// The in-memory and on-disk form of a program are the same fixed-layout,
// little-endian records; docs/isa.md and docs/binary-format.md describe every
// field for anyone writing an emitter. Changing a record means bumping
// kFormatVersion.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_ISA_ISA_H
#define SPYRE_ISA_ISA_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

namespace spyre::isa {

inline constexpr char kMagic[8] = {'S', 'P', 'Y', 'R', 'E', 'B', 'I', 'N'};
inline constexpr uint32_t kFormatVersion = 1;

/// Element types in device memory and LX. 16-bit floats are DLFloat16.
enum class DType : uint8_t { dl16 = 0, f32 = 1, i32 = 2, i8 = 3, u8 = 4 };
inline constexpr uint8_t kNumDTypes = 5;
inline int64_t dtypeBytes(DType t) {
  switch (t) {
  case DType::dl16: return 2;
  case DType::f32: case DType::i32: return 4;
  default: return 1;
  }
}

/// Which engine of a core executes an instruction.
enum class Engine : uint8_t { control = 0, dma = 1, pt = 2, sfu = 3 };
inline constexpr int kNumEngines = 4;

enum class Opcode : uint8_t {
  // Sequencer (control).
  nop = 0,
  loop = 1,     ///< shape[0] iterations of the instructions up to loop_end
  loop_end = 2,
  barrier = 3,  ///< drain this core, then meet every core of the program
  kernel = 4,   ///< counters from here on belong to kernel shape[0]
  // DMA engine.
  dma = 16,     ///< strided copy between device memory and LX (or LX to LX)
  ring = 17,    ///< copy from this core's LX to another core's LX
  gather = 18,  ///< rows of a device table selected by i32 indices in LX
  scatter = 19, ///< rows from LX written to a device table at i32 indices in LX
  // Matrix unit.
  matmul = 32,
  // Vector unit.
  unary = 48,
  binary = 49,
  select = 50,
  fill = 51,
  reduce = 52,
};

enum class UnaryFunc : uint8_t {
  copy, neg, abs, exp, log, log1p, expm1, tanh, sigmoid, erf, sqrt, rsqrt,
  sin, cos, floor, ceil, round, trunc, sign, reciprocal, relu, logical_not,
  bitwise_not, isnan, isinf, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh,
  log2, log10, exp2, erfc, lgamma, signbit,
  count_
};
enum class BinaryFunc : uint8_t {
  add, sub, mul, div, max, min, pow, eq, ne, lt, le, gt, ge,
  logical_and, logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor,
  shl, shr, fmod, mod, floordiv, atan2, truediv_int, hypot, copysign, nextafter,
  count_
};
enum class FillFunc : uint8_t {
  constant, ///< imm[0]
  iota,     ///< imm[0] + imm[1] * row + imm[2] * col
  count_
};
enum class ReduceFunc : uint8_t {
  sum, prod, max, min, argmax, argmin, any, all, welford,
  count_
};

/// Names of the functions, in enum order: the one spelling used by the
/// Python API, the hardware-level IR and the docs.
inline constexpr std::array<const char *, static_cast<size_t>(UnaryFunc::count_)> kUnaryFuncNames = {
    "copy", "neg", "abs", "exp", "log", "log1p", "expm1", "tanh", "sigmoid", "erf", "sqrt",
    "rsqrt", "sin", "cos", "floor", "ceil", "round", "trunc", "sign", "reciprocal", "relu",
    "logical_not", "bitwise_not", "isnan", "isinf", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "asinh", "acosh", "atanh", "log2", "log10", "exp2", "erfc", "lgamma", "signbit"};
inline constexpr std::array<const char *, static_cast<size_t>(BinaryFunc::count_)> kBinaryFuncNames = {
    "add", "sub", "mul", "div", "max", "min", "pow", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "shl", "shr", "fmod", "mod", "floordiv", "atan2", "truediv_int", "hypot", "copysign",
    "nextafter"};
inline constexpr std::array<const char *, static_cast<size_t>(ReduceFunc::count_)> kReduceFuncNames = {
    "sum", "prod", "max", "min", "argmax", "argmin", "any", "all", "welford"};
inline constexpr std::array<const char *, size_t{kNumDTypes}> kDTypeNames = {"dl16", "f32", "i32", "i8", "u8"};

template <size_t N> constexpr bool allNamed(const std::array<const char *, N> &names) {
  for (const char *name : names)
    if (name == nullptr)
      return false;
  return true;
}
static_assert(allNamed(kUnaryFuncNames) && allNamed(kBinaryFuncNames) &&
              allNamed(kReduceFuncNames) && allNamed(kDTypeNames),
              "every function needs a name");

/// Index of `name` in `names`, or -1.
template <size_t N>
int indexOfName(const std::array<const char *, N> &names, std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i])
      return static_cast<int>(i);
  return -1;
}

/// Instruction flags.
enum Flags : uint16_t {
  kTransposeA = 1 << 0,   ///< matmul: A is stored K x M
  kTransposeB = 1 << 1,   ///< matmul: B is stored N x K
  kAccumulate = 1 << 2,   ///< matmul, reduce: combine with the output's content
  kSrc1Imm = 1 << 3,      ///< binary: the second source is imm[0]
  kSignalRemote = 1 << 4, ///< ring: signal the semaphore on the destination core
};
inline constexpr uint16_t kAllFlags = 0x1f;

inline constexpr uint32_t kLx = 0xffffffffu; ///< Operand::buffer for LX
inline constexpr uint8_t kNoSem = 0xff;
inline constexpr int kNumSems = 64;
inline constexpr int kMaxLoopDepth = 3;
inline constexpr int kMaxRank = 8;

/// Simulator limits per instruction (docs/isa.md): far beyond what fits the
/// card's LX, they keep a corrupt or hostile instruction from occupying the
/// host. A whole program's work has its own budget (Program.h).
inline constexpr int64_t kMaxRowsPerTransfer = int64_t{1} << 24;
inline constexpr int64_t kMaxBytesPerTransfer = int64_t{1} << 31;
inline constexpr int64_t kMaxElementsPerVectorOp = int64_t{1} << 24;
inline constexpr int64_t kMaxMacsPerMatmul = int64_t{1} << 33;

/// A memory operand. Its address in an iteration of the enclosing hardware
/// loops is offset + sum(loopInc[l] * iv[l]), l = 0 for the innermost loop.
struct Operand {
  uint32_t buffer;     ///< index in the buffer table, or kLx
  uint16_t core;       ///< ring: destination core; otherwise 0
  uint8_t dtype;       ///< DType
  uint8_t reserved0;
  int64_t offset;      ///< bytes
  int64_t stride[3];   ///< bytes; per opcode (docs/isa.md)
  int64_t loopInc[3];  ///< bytes per iteration of loops 0, 1, 2
};
static_assert(sizeof(Operand) == 64);

struct Instr {
  uint8_t opcode;      ///< Opcode
  uint8_t func;        ///< UnaryFunc / BinaryFunc / FillFunc / ReduceFunc
  uint16_t flags;      ///< Flags
  uint8_t waitSem;     ///< start when sems[waitSem] >= waitCount (kNoSem: no wait)
  uint8_t signalSem;   ///< sems[signalSem] += 1 on completion (kNoSem: none)
  uint16_t reserved0;
  int64_t waitCount;   ///< plus waitInc[l] * iv[l]
  int64_t waitInc[3];
  int64_t shape[4];    ///< per opcode (docs/isa.md)
  double imm[3];
  Operand ops[4];      ///< ops[0] is the destination
};
static_assert(sizeof(Instr) == 352);

/// The operands [first, end) of a vector instruction that are rows x cols
/// views, a value per element (the others of a reduce hold one value per
/// row): what the validator checks as such and the SFU streams.
struct ElementOperands {
  int first = 0, end = 0;
};
inline ElementOperands elementOperands(const Instr &in) {
  switch (static_cast<Opcode>(in.opcode)) {
  case Opcode::unary: return {0, 2};
  case Opcode::binary: return {0, (in.flags & kSrc1Imm) ? 2 : 3};
  case Opcode::select: return {0, 4};
  case Opcode::fill: return {0, 1};
  case Opcode::reduce: return {1, 2};
  default: return {};
  }
}

/// Bytes [lo, hi) that operand `index` (0: destination, 1: source) of a
/// dma or ring instruction touches, relative to its offset: rows of
/// `shape[0]` bytes stepped by the operand's three strides. `Int` must hold
/// the products of an unvalidated record (the validator uses __int128).
template <typename Int>
std::pair<Int, Int> transferReach(const Instr &in, int index) {
  if (in.shape[0] == 0 || in.shape[1] == 0 || in.shape[2] == 0 || in.shape[3] == 0)
    return {0, 0};
  Int lo = 0, hi = in.shape[0];
  for (int d = 0; d < 3; ++d) {
    Int reach = static_cast<Int>(in.shape[d + 1] - 1) * in.ops[index].stride[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

//===----------------------------------------------------------------------===//
// File layout
//===----------------------------------------------------------------------===//

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t headerBytes;   ///< sizeof(FileHeader)
  uint64_t fileBytes;
  uint32_t crc32;         ///< zlib crc32 of bytes [headerBytes, fileBytes)
  uint32_t numSections;
  uint64_t archFingerprint;
  uint32_t numCores;      ///< cores the program was compiled for
  uint32_t reserved0;
  uint64_t reserved1[2];
};
static_assert(sizeof(FileHeader) == 64);

enum class SectionKind : uint32_t { strings = 1, buffers = 2, constants = 3, code = 4 };

struct SectionEntry {
  uint32_t kind;
  uint32_t reserved0;
  uint64_t offset; ///< from the start of the file
  uint64_t bytes;
};
static_assert(sizeof(SectionEntry) == 24);

enum class BufferKind : uint32_t { input = 0, output = 1, inout = 2, scratch = 3, constant = 4 };

/// Host element types, so the runtime converts user tensors correctly.
enum class HostDType : uint32_t { f16 = 0, bf16 = 1, f32 = 2, i32 = 3, i64 = 4, i8 = 5, boolean = 6 };
inline constexpr uint32_t kNumHostDTypes = 7;

struct BufferDesc {
  uint32_t name;        ///< offset in the strings section
  uint32_t kind;        ///< BufferKind
  uint8_t dtype;        ///< DType on the device
  uint8_t reserved0[3];
  uint32_t hostDType;   ///< HostDType
  uint32_t rank;
  uint32_t reserved1;
  int64_t dims[kMaxRank];
  uint64_t bytes;       ///< product(dims) * dtypeBytes(dtype)
  uint64_t constOffset; ///< constants: offset in the constants section
};
static_assert(sizeof(BufferDesc) == 104);

struct StreamDesc {
  uint32_t core;
  uint32_t numInstrs;
  uint64_t offset; ///< bytes from the start of the code section
};
static_assert(sizeof(StreamDesc) == 16);

static_assert(std::is_trivially_copyable_v<Instr> &&
              std::is_trivially_copyable_v<FileHeader>);

} // namespace spyre::isa

#endif // SPYRE_ISA_ISA_H
