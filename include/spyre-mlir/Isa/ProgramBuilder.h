//===- ProgramBuilder.h - write programs for the card ---------*- C++ -*-===//
//
// The emitter of the compiler and hand-written tests both build programs
// through this; it fills the fixed-layout records of Isa.h so that callers
// never touch raw fields. Python sees the same API (spyre_mlir.simulator).
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_ISA_PROGRAMBUILDER_H
#define SPYRE_ISA_PROGRAMBUILDER_H

#include "spyre-mlir/Isa/Program.h"

#include <array>
#include <optional>

namespace spyre {

/// Where an operand lives and how it is walked (docs/isa.md, "Operands").
struct OperandSpec {
  uint32_t buffer = isa::kLx;
  isa::DType dtype = isa::DType::dl16;
  int64_t offset = 0;
  std::array<int64_t, 3> strides = {0, 0, 0};
  std::array<int64_t, 3> loopInc = {0, 0, 0};
  uint16_t core = 0;
};

/// Synchronisation of one instruction.
struct Sync {
  std::optional<uint8_t> waitSem;
  int64_t waitCount = 0;
  std::array<int64_t, 3> waitInc = {0, 0, 0};
  std::optional<uint8_t> signalSem;
};

class StreamBuilder {
public:
  /// Appends to stream `index` of `program`; stays valid as streams are added.
  StreamBuilder(Program &program, size_t index) : program(&program), index(index) {}

  size_t loop(int64_t trips);
  size_t endLoop();
  size_t barrier();
  size_t kernel(int64_t id);
  size_t nop();

  /// Copies rows of `rowBytes` bytes, counts[i] steps of each operand's
  /// strides[i] (innermost first).
  size_t dma(const OperandSpec &dst, const OperandSpec &src, int64_t rowBytes,
             std::array<int64_t, 3> counts, const Sync &sync = {});
  /// Like dma, from this core's LX into the LX of dst.core.
  size_t ring(const OperandSpec &dst, const OperandSpec &src, int64_t rowBytes,
              std::array<int64_t, 3> counts, bool signalRemote, const Sync &sync = {});
  /// dst row j = table row indices[j]; table rows are strides[0] apart.
  size_t gather(const OperandSpec &dst, const OperandSpec &table, const OperandSpec &indices,
                int64_t rowBytes, int64_t count, int64_t tableRows, const Sync &sync = {});
  /// table row indices[j] = src row j; src rows are strides[0] apart.
  size_t scatter(const OperandSpec &table, const OperandSpec &src, const OperandSpec &indices,
                 int64_t rowBytes, int64_t count, int64_t tableRows, const Sync &sync = {});
  size_t matmul(const OperandSpec &c, const OperandSpec &a, const OperandSpec &b, int64_t m,
                int64_t k, int64_t n, bool transposeA, bool transposeB, bool accumulate,
                const Sync &sync = {});
  size_t unary(isa::UnaryFunc f, const OperandSpec &dst, const OperandSpec &src, int64_t rows,
               int64_t cols, const Sync &sync = {});
  size_t binary(isa::BinaryFunc f, const OperandSpec &dst, const OperandSpec &a,
                const OperandSpec &b, int64_t rows, int64_t cols, const Sync &sync = {});
  size_t binaryImm(isa::BinaryFunc f, const OperandSpec &dst, const OperandSpec &a, double b,
                   int64_t rows, int64_t cols, const Sync &sync = {});
  size_t select(const OperandSpec &dst, const OperandSpec &cond, const OperandSpec &a,
                const OperandSpec &b, int64_t rows, int64_t cols, const Sync &sync = {});
  size_t fill(const OperandSpec &dst, double value, int64_t rows, int64_t cols,
              const Sync &sync = {});
  size_t iota(const OperandSpec &dst, double start, double rowStep, double colStep,
              int64_t rows, int64_t cols, const Sync &sync = {});
  /// One value per row of the rows x cols source. argmax/argmin with
  /// accumulate keep running extremes in `aux1` and add `indexOffset` to
  /// positions; welford writes mean to dst, M2 to aux1, weight to aux2.
  size_t reduce(isa::ReduceFunc f, const OperandSpec &dst, const OperandSpec &src, int64_t rows,
                int64_t cols, bool accumulate, const OperandSpec &aux1 = {},
                const OperandSpec &aux2 = {}, double indexOffset = 0, const Sync &sync = {});

  /// Appends a raw instruction (tests that need malformed programs).
  size_t raw(const isa::Instr &instr);

private:
  size_t push(isa::Opcode op, uint8_t func, uint16_t flags, const Sync &sync);
  Stream &stream() { return program->streams[index]; }
  Program *program;
  size_t index;
};

class ProgramBuilder {
public:
  ProgramBuilder(const Arch &arch, uint32_t numCores);

  uint32_t addBuffer(const std::string &name, isa::BufferKind kind, isa::DType dtype,
                     isa::HostDType hostDType, const std::vector<int64_t> &dims,
                     std::vector<uint8_t> constant = {});
  StreamBuilder core(uint32_t core);
  const Program &program() const { return program_; }
  Program finish() const { return program_; }

private:
  Program program_;
};

} // namespace spyre

#endif // SPYRE_ISA_PROGRAMBUILDER_H
