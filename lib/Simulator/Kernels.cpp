//===- Kernels.cpp - functional semantics of the instructions -------------===//
//
// The vector unit computes in f32 and rounds on store; when every operand is
// an integer it computes exactly in int64 instead. The matrix unit rounds its
// inputs to DLFloat16, multiplies and accumulates in f32.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "spyre-mlir/Isa/Program.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace spyre {
using namespace isa;

uint8_t *Memory::at(const Operand &o, uint32_t core, int64_t lo, int64_t hi) const {
  uint8_t *base;
  uint64_t size;
  if (o.buffer == kLx) {
    base = const_cast<uint8_t *>(lx.at(core).data());
    size = lx[core].size();
  } else {
    base = buffers.at(o.buffer);
    size = bufferBytes.at(o.buffer);
  }
  __int128 begin = static_cast<__int128>(o.offset) + lo;
  __int128 end = static_cast<__int128>(o.offset) + hi;
  if (begin < 0 || end > static_cast<__int128>(size) || begin > end)
    throw Error("access outside " + std::string(o.buffer == kLx ? "LX" : "a buffer"));
  return base + static_cast<int64_t>(begin);
}

namespace {

bool isInt(DType t) { return t == DType::i32 || t == DType::i8 || t == DType::u8; }

float loadF(const uint8_t *p, DType t, const DLFloat16 &dl) {
  switch (t) {
  case DType::dl16: { uint16_t v; std::memcpy(&v, p, 2); return dl.toFloat(v); }
  case DType::f32: { float v; std::memcpy(&v, p, 4); return v; }
  case DType::i32: { int32_t v; std::memcpy(&v, p, 4); return static_cast<float>(v); }
  case DType::i8: return static_cast<float>(static_cast<int8_t>(*p));
  default: return static_cast<float>(*p);
  }
}

int64_t loadI(const uint8_t *p, DType t) {
  switch (t) {
  case DType::i32: { int32_t v; std::memcpy(&v, p, 4); return v; }
  case DType::i8: return static_cast<int8_t>(*p);
  default: return *p;
  }
}

/// Float to integer as C does (toward zero), saturating; NaN becomes 0.
int64_t toInt(double v, int64_t lo, int64_t hi) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(lo)) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(v);
}

/// Integer results wrap around like the card's (and torch's) integer
/// arithmetic; conversions from float saturate first (toInt).
void storeI(uint8_t *p, DType t, int64_t v) {
  switch (t) {
  case DType::i32: { auto w = static_cast<int32_t>(static_cast<uint32_t>(v)); std::memcpy(p, &w, 4); return; }
  default: *p = static_cast<uint8_t>(v); return;
  }
}

/// Overflows to DLFloat16 infinities of the instruction running on this
/// thread (execute() resets and returns it); a thread-local keeps the store
/// helpers' signatures, and is touched only when a value overflows.
thread_local int64_t tlsOverflows = 0;

void storeF(uint8_t *p, DType t, float v, const DLFloat16 &dl) {
  switch (t) {
  case DType::dl16: {
    int64_t overflow = 0; // the thread-local is touched only when it did
    uint16_t w = dl.fromFloat(v, overflow);
    std::memcpy(p, &w, 2);
    if (overflow) [[unlikely]]
      tlsOverflows += overflow;
    return;
  }
  case DType::f32: std::memcpy(p, &v, 4); return;
  case DType::u8: *p = v != 0.0f ? 1 : 0; return; // booleans
  case DType::i32: storeI(p, t, toInt(v, INT32_MIN, INT32_MAX)); return;
  default: storeI(p, t, toInt(v, -128, 127)); return;
  }
}

/// A rows x cols view of an operand in LX.
struct View {
  uint8_t *base;
  int64_t rowStride, colStride;
  DType type;
  uint8_t *at(int64_t r, int64_t c) const { return base + r * rowStride + c * colStride; }
};

View view(const Instr &in, int index, uint32_t core, Memory &mem, int64_t rows, int64_t cols) {
  const Operand &o = in.ops[index];
  auto type = static_cast<DType>(o.dtype);
  int64_t lo = 0, hi = dtypeBytes(type);
  for (auto [n, s] : {std::pair{rows, o.stride[0]}, std::pair{cols, o.stride[1]}})
    (s < 0 ? lo : hi) += (n - 1) * s;
  return View{mem.at(o, core, lo, hi) - lo, o.stride[0], o.stride[1], type};
}

float unaryF(UnaryFunc f, float x) {
  switch (f) {
  case UnaryFunc::copy: return x;
  case UnaryFunc::neg: return -x;
  case UnaryFunc::abs: return std::fabs(x);
  case UnaryFunc::exp: return std::exp(x);
  case UnaryFunc::log: return std::log(x);
  case UnaryFunc::log1p: return std::log1p(x);
  case UnaryFunc::expm1: return std::expm1(x);
  case UnaryFunc::tanh: return std::tanh(x);
  case UnaryFunc::sigmoid: return 1.0f / (1.0f + std::exp(-x));
  case UnaryFunc::erf: return std::erf(x);
  case UnaryFunc::sqrt: return std::sqrt(x);
  case UnaryFunc::rsqrt: return 1.0f / std::sqrt(x);
  case UnaryFunc::sin: return std::sin(x);
  case UnaryFunc::cos: return std::cos(x);
  case UnaryFunc::floor: return std::floor(x);
  case UnaryFunc::ceil: return std::ceil(x);
  case UnaryFunc::round: return std::nearbyint(x); // ties to even, as torch.round
  case UnaryFunc::trunc: return std::trunc(x);
  case UnaryFunc::sign: return std::isnan(x) ? x : static_cast<float>((x > 0) - (x < 0));
  case UnaryFunc::reciprocal: return 1.0f / x;
  case UnaryFunc::relu: return x > 0 ? x : (std::isnan(x) ? x : 0.0f);
  case UnaryFunc::logical_not: return x == 0.0f ? 1.0f : 0.0f;
  case UnaryFunc::isnan: return std::isnan(x) ? 1.0f : 0.0f;
  case UnaryFunc::isinf: return std::isinf(x) ? 1.0f : 0.0f;
  case UnaryFunc::tan: return std::tan(x);
  case UnaryFunc::asin: return std::asin(x);
  case UnaryFunc::acos: return std::acos(x);
  case UnaryFunc::atan: return std::atan(x);
  case UnaryFunc::sinh: return std::sinh(x);
  case UnaryFunc::cosh: return std::cosh(x);
  case UnaryFunc::asinh: return std::asinh(x);
  case UnaryFunc::acosh: return std::acosh(x);
  case UnaryFunc::atanh: return std::atanh(x);
  case UnaryFunc::log2: return std::log2(x);
  case UnaryFunc::log10: return std::log10(x);
  case UnaryFunc::exp2: return std::exp2(x);
  case UnaryFunc::erfc: return std::erfc(x);
  case UnaryFunc::lgamma: return std::lgamma(x);
  case UnaryFunc::signbit: return std::signbit(x) ? 1.0f : 0.0f;
  default: return x; // bitwise_not has no float form; validated away below
  }
}

int64_t unaryI(UnaryFunc f, int64_t x) {
  switch (f) {
  case UnaryFunc::neg: return -x;
  case UnaryFunc::abs: return x < 0 ? -x : x;
  case UnaryFunc::sign: return (x > 0) - (x < 0);
  case UnaryFunc::relu: return x > 0 ? x : 0;
  case UnaryFunc::logical_not: return x == 0;
  case UnaryFunc::bitwise_not: return ~x;
  case UnaryFunc::signbit: return x < 0;
  case UnaryFunc::isnan: case UnaryFunc::isinf: return 0;
  default: return x; // copy, floor, ceil, round, trunc of an integer
  }
}

bool isIntegerOnlyUnary(UnaryFunc f) { return f == UnaryFunc::bitwise_not; }

/// Comparisons and logical operations, the same for floats and integers.
template <typename T> std::optional<T> compareOrLogical(BinaryFunc f, T a, T b) {
  switch (f) {
  case BinaryFunc::eq: return a == b;
  case BinaryFunc::ne: return a != b;
  case BinaryFunc::lt: return a < b;
  case BinaryFunc::le: return a <= b;
  case BinaryFunc::gt: return a > b;
  case BinaryFunc::ge: return a >= b;
  case BinaryFunc::logical_and: return (a != 0) && (b != 0);
  case BinaryFunc::logical_or: return (a != 0) || (b != 0);
  case BinaryFunc::logical_xor: return (a != 0) != (b != 0);
  default: return std::nullopt;
  }
}

float binaryF(BinaryFunc f, float a, float b) {
  if (std::optional<float> r = compareOrLogical(f, a, b))
    return *r;
  switch (f) {
  case BinaryFunc::add: return a + b;
  case BinaryFunc::sub: return a - b;
  case BinaryFunc::mul: return a * b;
  case BinaryFunc::div: case BinaryFunc::truediv_int: return a / b;
  case BinaryFunc::max: return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
  case BinaryFunc::min: return (std::isnan(a) || std::isnan(b)) ? NAN : std::min(a, b);
  case BinaryFunc::pow: return std::pow(a, b);
  case BinaryFunc::fmod: return std::fmod(a, b);
  case BinaryFunc::mod: { float r = std::fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
  case BinaryFunc::floordiv: return std::floor(a / b);
  case BinaryFunc::atan2: return std::atan2(a, b);
  case BinaryFunc::hypot: return std::hypot(a, b);
  case BinaryFunc::copysign: return std::copysign(a, b);
  case BinaryFunc::nextafter: return std::nextafter(a, b);
  default: return NAN; // bitwise ops and shifts need integers
  }
}

int64_t binaryI(BinaryFunc f, int64_t a, int64_t b) {
  if (std::optional<int64_t> r = compareOrLogical(f, a, b))
    return *r;
  auto needNonZero = [&] { if (b == 0) throw Error("integer division by zero"); };
  switch (f) {
  case BinaryFunc::add: return a + b;
  case BinaryFunc::sub: return a - b;
  case BinaryFunc::mul: return a * b;
  case BinaryFunc::max: return std::max(a, b);
  case BinaryFunc::min: return std::min(a, b);
  case BinaryFunc::bitwise_and: return a & b;
  case BinaryFunc::bitwise_or: return a | b;
  case BinaryFunc::bitwise_xor: return a ^ b;
  case BinaryFunc::shl: return (b < 0 || b > 62) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
  case BinaryFunc::shr: return (b < 0 || b > 62) ? (a < 0 ? -1 : 0) : a >> b;
  case BinaryFunc::fmod: needNonZero(); return a % b;
  case BinaryFunc::mod: { needNonZero(); int64_t r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
  case BinaryFunc::floordiv: { needNonZero(); int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
  case BinaryFunc::pow: { int64_t r = 1; for (int64_t i = 0; i < b && i < 64; ++i) r *= a; return b < 0 ? 0 : r; }
  default: needNonZero(); return a / b; // div, truediv_int of integers
  }
}

bool isIntegerOnlyBinary(BinaryFunc f) {
  return f == BinaryFunc::bitwise_and || f == BinaryFunc::bitwise_or ||
         f == BinaryFunc::bitwise_xor || f == BinaryFunc::shl || f == BinaryFunc::shr;
}

void execUnary(const Instr &in, uint32_t core, Memory &mem, const DLFloat16 &dl) {
  int64_t rows = in.shape[0], cols = in.shape[1];
  if (!rows || !cols) return;
  View d = view(in, 0, core, mem, rows, cols), s = view(in, 1, core, mem, rows, cols);
  auto f = static_cast<UnaryFunc>(in.func);
  bool ints = isInt(d.type) && isInt(s.type);
  if (isIntegerOnlyUnary(f) && !ints)
    throw Error("bitwise_not needs integer operands");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      if (ints)
        storeI(d.at(r, c), d.type, unaryI(f, loadI(s.at(r, c), s.type)));
      else
        storeF(d.at(r, c), d.type, unaryF(f, loadF(s.at(r, c), s.type, dl)), dl);
    }
}

void execBinary(const Instr &in, uint32_t core, Memory &mem, const DLFloat16 &dl) {
  int64_t rows = in.shape[0], cols = in.shape[1];
  if (!rows || !cols) return;
  bool imm = in.flags & kSrc1Imm;
  View d = view(in, 0, core, mem, rows, cols), a = view(in, 1, core, mem, rows, cols);
  View b = imm ? View{} : view(in, 2, core, mem, rows, cols);
  auto f = static_cast<BinaryFunc>(in.func);
  bool immInt = imm && in.imm[0] == std::trunc(in.imm[0]);
  bool ints = isInt(d.type) && isInt(a.type) && (imm ? immInt : isInt(b.type));
  // Comparisons and logical ops of integers write booleans from exact math.
  if (isIntegerOnlyBinary(f) && !ints)
    throw Error("bitwise and shift operations need integer operands");
  if (!isInt(d.type) && isInt(a.type) && (imm ? immInt : isInt(b.type)) &&
      f >= BinaryFunc::eq && f <= BinaryFunc::logical_xor)
    ints = true;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      if (ints) {
        int64_t y = imm ? static_cast<int64_t>(in.imm[0]) : loadI(b.at(r, c), b.type);
        int64_t v = binaryI(f, loadI(a.at(r, c), a.type), y);
        if (isInt(d.type)) storeI(d.at(r, c), d.type, v);
        else storeF(d.at(r, c), d.type, static_cast<float>(v), dl);
      } else {
        float y = imm ? static_cast<float>(in.imm[0]) : loadF(b.at(r, c), b.type, dl);
        storeF(d.at(r, c), d.type, binaryF(f, loadF(a.at(r, c), a.type, dl), y), dl);
      }
    }
}

void execSelect(const Instr &in, uint32_t core, Memory &mem, const DLFloat16 &dl) {
  int64_t rows = in.shape[0], cols = in.shape[1];
  if (!rows || !cols) return;
  View d = view(in, 0, core, mem, rows, cols), c = view(in, 1, core, mem, rows, cols);
  View a = view(in, 2, core, mem, rows, cols), b = view(in, 3, core, mem, rows, cols);
  int64_t e = dtypeBytes(d.type);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) {
      const View &src = loadF(c.at(r, k), c.type, dl) != 0.0f ? a : b;
      if (src.type == d.type)
        std::memmove(d.at(r, k), src.at(r, k), e);
      else if (isInt(src.type) && isInt(d.type))
        storeI(d.at(r, k), d.type, loadI(src.at(r, k), src.type));
      else
        storeF(d.at(r, k), d.type, loadF(src.at(r, k), src.type, dl), dl);
    }
}

void execFill(const Instr &in, uint32_t core, Memory &mem, const DLFloat16 &dl) {
  int64_t rows = in.shape[0], cols = in.shape[1];
  if (!rows || !cols) return;
  View d = view(in, 0, core, mem, rows, cols);
  bool iota = static_cast<FillFunc>(in.func) == FillFunc::iota;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double v = iota ? in.imm[0] + in.imm[1] * r + in.imm[2] * c : in.imm[0];
      if (isInt(d.type)) storeI(d.at(r, c), d.type, toInt(v, INT64_MIN, INT64_MAX));
      else storeF(d.at(r, c), d.type, static_cast<float>(v), dl);
    }
}

void execReduce(const Instr &in, uint32_t core, Memory &mem, const DLFloat16 &dl) {
  int64_t rows = in.shape[0], cols = in.shape[1];
  if (!rows) return;
  auto kind = static_cast<ReduceFunc>(in.func);
  bool acc = in.flags & kAccumulate;
  View x = view(in, 1, core, mem, rows, std::max<int64_t>(cols, 1));
  View out = view(in, 0, core, mem, rows, 1);
  for (int64_t r = 0; r < rows; ++r) {
    switch (kind) {
    case ReduceFunc::sum: case ReduceFunc::prod: case ReduceFunc::max: case ReduceFunc::min: {
      bool sum = kind == ReduceFunc::sum, prod = kind == ReduceFunc::prod;
      float v = sum ? 0.0f : prod ? 1.0f : (kind == ReduceFunc::max ? -INFINITY : INFINITY);
      if (acc) v = loadF(out.at(r, 0), out.type, dl);
      for (int64_t c = 0; c < cols; ++c) {
        float e = loadF(x.at(r, c), x.type, dl);
        if (sum) v += e;
        else if (prod) v *= e;
        else if (std::isnan(e) || std::isnan(v)) v = NAN;
        else v = kind == ReduceFunc::max ? std::max(v, e) : std::min(v, e);
      }
      storeF(out.at(r, 0), out.type, v, dl);
      break;
    }
    case ReduceFunc::any: case ReduceFunc::all: {
      bool any = kind == ReduceFunc::any;
      bool v = acc ? loadF(out.at(r, 0), out.type, dl) != 0.0f : !any;
      for (int64_t c = 0; c < cols; ++c) {
        bool e = loadF(x.at(r, c), x.type, dl) != 0.0f;
        v = any ? (v || e) : (v && e);
      }
      storeF(out.at(r, 0), out.type, v ? 1.0f : 0.0f, dl);
      break;
    }
    case ReduceFunc::argmax: case ReduceFunc::argmin: {
      // The first extreme wins; a NaN counts as the extreme, as in torch.
      bool isMax = kind == ReduceFunc::argmax;
      View best = acc ? view(in, 2, core, mem, rows, 1) : View{};
      float bv = acc ? loadF(best.at(r, 0), best.type, dl) : NAN;
      int64_t bi = acc ? loadI(out.at(r, 0), out.type) : -1;
      for (int64_t c = 0; c < cols; ++c) {
        float e = loadF(x.at(r, c), x.type, dl);
        bool take = bi < 0 || (!std::isnan(bv) && (std::isnan(e) || (isMax ? e > bv : e < bv)));
        if (take) { bv = e; bi = static_cast<int64_t>(in.imm[0]) + c; }
      }
      storeI(out.at(r, 0), DType::i32, bi < 0 ? 0 : bi);
      if (acc) storeF(best.at(r, 0), best.type, bv, dl);
      break;
    }
    case ReduceFunc::welford: {
      View m2v = view(in, 2, core, mem, rows, 1), wv = view(in, 3, core, mem, rows, 1);
      double mean = 0, m2 = 0, n = 0;
      for (int64_t c = 0; c < cols; ++c) {
        double e = loadF(x.at(r, c), x.type, dl);
        n += 1;
        double delta = e - mean;
        mean += delta / n;
        m2 += delta * (e - mean);
      }
      if (acc) { // Chan et al.: merge with the partial result already stored
        double n0 = loadF(wv.at(r, 0), wv.type, dl);
        double mean0 = loadF(out.at(r, 0), out.type, dl), m20 = loadF(m2v.at(r, 0), m2v.type, dl);
        double total = n0 + n;
        if (total > 0) {
          double delta = mean - mean0;
          mean = mean0 + delta * n / total;
          m2 = m20 + m2 + delta * delta * n0 * n / total;
        } else {
          mean = mean0; m2 = m20;
        }
        n = total;
      }
      storeF(out.at(r, 0), out.type, static_cast<float>(mean), dl);
      storeF(m2v.at(r, 0), m2v.type, static_cast<float>(m2), dl);
      storeF(wv.at(r, 0), wv.type, static_cast<float>(n), dl);
      break;
    }
    default:
      break;
    }
  }
}

__attribute__((target_clones("avx2", "default")))
void decodeRow(const DLFloat16 &dl, const uint8_t *row, float *dst, int64_t n) {
  dl.toFloat(row, dst, n);
}

__attribute__((target_clones("avx2", "default")))
int64_t encodeRow(const DLFloat16 &dl, const float *values, uint8_t *row, int64_t n) {
  return dl.fromFloat(values, row, n);
}

/// Loads a stored rows x cols matrix (row stride in bytes, elements
/// contiguous) as the DLFloat16 values the matrix unit sees, in f32, into
/// `out` (a per-thread buffer reused across instructions, so that large
/// matmuls do not pay for fresh pages every time).
void loadMatrix(const Operand &o, uint32_t core, Memory &mem, const DLFloat16 &dl, int64_t rows,
                int64_t cols, std::vector<float> &out) {
  if (static_cast<int64_t>(out.size()) < rows * cols)
    out.resize(rows * cols);
  if (!rows || !cols)
    return;
  auto type = static_cast<DType>(o.dtype);
  int64_t e = dtypeBytes(type);
  const uint8_t *base = mem.at(o, core, 0, (rows - 1) * o.stride[0] + cols * e);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t *row = base + r * o.stride[0];
    float *dst = out.data() + r * cols;
    if (type == DType::dl16) {
      decodeRow(dl, row, dst, cols);
    } else { // f32 inputs are rounded to DLFloat16 on their way to the array
      int64_t overflows = 0;
      for (int64_t c = 0; c < cols; ++c) {
        float v;
        std::memcpy(&v, row + 4 * c, 4);
        dst[c] = dl.toFloat(dl.fromFloat(v, overflows));
      }
      tlsOverflows += overflows;
    }
  }
}

/// The products are exact in f32 (two 10-bit significands) and accumulate
/// in f32; OpenBLAS does the accumulation. It splits work by output blocks,
/// so every element is summed by one thread in a fixed order: results are
/// the same from run to run.
void execMatmul(const Instr &in, uint32_t core, Memory &mem, const DLFloat16 &dl) {
  int64_t m = in.shape[0], k = in.shape[1], n = in.shape[2];
  if (!m || !n) return;
  bool ta = in.flags & kTransposeA, tb = in.flags & kTransposeB;
  // Per-thread buffers reused across instructions; bind references once so
  // that the loops below do not look the thread-local storage up each time.
  thread_local std::vector<float> tlsA, tlsB, tlsC;
  std::vector<float> &a = tlsA, &b = tlsB, &c = tlsC;
  loadMatrix(in.ops[1], core, mem, dl, ta ? k : m, ta ? m : k, a);
  loadMatrix(in.ops[2], core, mem, dl, tb ? n : k, tb ? k : n, b);
  const Operand &o = in.ops[0];
  auto type = static_cast<DType>(o.dtype);
  int64_t e = dtypeBytes(type);
  uint8_t *base = mem.at(o, core, 0, (m - 1) * o.stride[0] + n * e);
  if (static_cast<int64_t>(c.size()) < m * n)
    c.resize(m * n);
  bool accumulate = in.flags & kAccumulate;
  if (accumulate)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * n + j] = loadF(base + i * o.stride[0] + j * e, type, dl);
  if (k == 0 && !accumulate)
    std::fill_n(c.begin(), m * n, 0.0f);
  if (k > 0)
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f,
                a.data(), static_cast<blasint>(ta ? m : k), b.data(),
                static_cast<blasint>(tb ? k : n), accumulate ? 1.0f : 0.0f, c.data(),
                static_cast<blasint>(n));
  const float *result = c.data();
  for (int64_t i = 0; i < m; ++i) {
    uint8_t *row = base + i * o.stride[0];
    if (type == DType::f32) {
      std::memcpy(row, result + i * n, n * 4);
      continue;
    }
    tlsOverflows += encodeRow(dl, result + i * n, row, n);
  }
}

/// Strided byte copy of a DMA or ring transfer.
void execCopy(const Instr &in, uint32_t srcCore, uint32_t dstCore, Memory &mem) {
  int64_t row = in.shape[0], n0 = in.shape[1], n1 = in.shape[2], n2 = in.shape[3];
  if (!row || !n0 || !n1 || !n2) return;
  auto range = [&](const Operand &o) {
    int64_t lo = 0, hi = row;
    for (auto [n, s] : {std::pair{n0, o.stride[0]}, std::pair{n1, o.stride[1]}, std::pair{n2, o.stride[2]}})
      (s < 0 ? lo : hi) += (n - 1) * s;
    return std::pair{lo, hi};
  };
  auto [dlo, dhi] = range(in.ops[0]);
  auto [slo, shi] = range(in.ops[1]);
  // at() checks the whole range and points at its lowest byte; a negative
  // stride walks down from the operand's origin, `lo` bytes above that.
  uint8_t *dst = mem.at(in.ops[0], dstCore, dlo, dhi) - dlo;
  const uint8_t *src = mem.at(in.ops[1], srcCore, slo, shi) - slo;
  const int64_t *ds = in.ops[0].stride, *ss = in.ops[1].stride;
  for (int64_t i2 = 0; i2 < n2; ++i2)
    for (int64_t i1 = 0; i1 < n1; ++i1)
      for (int64_t i0 = 0; i0 < n0; ++i0)
        std::memmove(dst + i0 * ds[0] + i1 * ds[1] + i2 * ds[2],
                     src + i0 * ss[0] + i1 * ss[1] + i2 * ss[2], row);
}

/// Row j of a gather's rows is table row indices[j]; a scatter writes it
/// there instead, in order, so that of two equal indices the later row stays.
void execIndexed(const Instr &in, uint32_t core, Memory &mem) {
  int64_t row = in.shape[0], n = in.shape[1], tableRows = in.shape[2];
  if (!row || !n) return;
  bool scatter = static_cast<Opcode>(in.opcode) == Opcode::scatter;
  const Operand &rows = in.ops[scatter ? 1 : 0], &table = in.ops[scatter ? 0 : 1];
  const uint8_t *idx = mem.at(in.ops[2], core, 0, n * 4);
  for (int64_t j = 0; j < n; ++j) {
    int32_t i;
    std::memcpy(&i, idx + 4 * j, 4);
    if (i < 0 || i >= tableRows)
      throw Error(std::string(scatter ? "scatter" : "gather") + " index " + std::to_string(i) +
                  " at position " + std::to_string(j) + " is outside [0, " +
                  std::to_string(tableRows) + ")");
    uint8_t *r = mem.at(rows, core, j * rows.stride[0], j * rows.stride[0] + row);
    uint8_t *t = mem.at(table, core, i * table.stride[0], i * table.stride[0] + row);
    if (scatter)
      std::memmove(t, r, row);
    else
      std::memmove(r, t, row);
  }
}

} // namespace

bool isTranscendental(const Instr &in) {
  if (static_cast<Opcode>(in.opcode) == Opcode::unary) {
    switch (static_cast<UnaryFunc>(in.func)) {
    case UnaryFunc::exp: case UnaryFunc::log: case UnaryFunc::log1p: case UnaryFunc::expm1:
    case UnaryFunc::tanh: case UnaryFunc::sigmoid: case UnaryFunc::erf: case UnaryFunc::sqrt:
    case UnaryFunc::rsqrt: case UnaryFunc::sin: case UnaryFunc::cos: case UnaryFunc::reciprocal:
    case UnaryFunc::tan: case UnaryFunc::asin: case UnaryFunc::acos: case UnaryFunc::atan:
    case UnaryFunc::sinh: case UnaryFunc::cosh: case UnaryFunc::asinh: case UnaryFunc::acosh:
    case UnaryFunc::atanh: case UnaryFunc::log2: case UnaryFunc::log10: case UnaryFunc::exp2:
    case UnaryFunc::erfc: case UnaryFunc::lgamma:
      return true;
    default: return false;
    }
  }
  if (static_cast<Opcode>(in.opcode) == Opcode::binary) {
    auto f = static_cast<BinaryFunc>(in.func);
    return f == BinaryFunc::pow || f == BinaryFunc::atan2 || f == BinaryFunc::div ||
           f == BinaryFunc::hypot;
  }
  return false;
}

int64_t execute(const Instr &in, uint32_t core, Memory &mem, const DLFloat16 &dl) {
  tlsOverflows = 0;
  try {
    switch (static_cast<Opcode>(in.opcode)) {
    case Opcode::dma: execCopy(in, core, core, mem); break;
    case Opcode::ring: execCopy(in, core, in.ops[0].core, mem); break;
    case Opcode::gather: case Opcode::scatter: execIndexed(in, core, mem); break;
    case Opcode::matmul: execMatmul(in, core, mem, dl); break;
    case Opcode::unary: execUnary(in, core, mem, dl); break;
    case Opcode::binary: execBinary(in, core, mem, dl); break;
    case Opcode::select: execSelect(in, core, mem, dl); break;
    case Opcode::fill: execFill(in, core, mem, dl); break;
    case Opcode::reduce: execReduce(in, core, mem, dl); break;
    default: throw Error("not an engine instruction");
    }
  } catch (const std::out_of_range &) {
    throw Error("operand refers to a missing buffer or core");
  }
  return tlsOverflows;
}

} // namespace spyre
