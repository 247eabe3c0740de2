//===- Program.h - a program for the card, in memory -----------*- C++ -*-===//

#ifndef SPYRE_ISA_PROGRAM_H
#define SPYRE_ISA_PROGRAM_H

#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Isa/Isa.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace spyre {

/// Every rejected file, program or run raises this; Python sees ValueError
/// (bad program) or RuntimeError (failed run).
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The work budget of a whole program (docs/binary-format.md, "Work limits"),
/// checked by Program::validate before anything runs: what the program asks
/// of the simulator's host, summed over all its cores and every iteration of
/// its hardware loops. Each limit is the amount of one kind of work that
/// alone spends the whole budget; a program may spend
/// `sum(work[kind] / limit[kind]) <= 1`, so no mix costs more than the
/// dearest kind alone. Measured on one core of an x86-64 host (AVX2, one
/// thread, the card's 2 MiB LX), the worst case of each kind at its limit:
///  - instructions, every executed record (nop, loop, loop_end included):
///    ~0.3 us each through the event loop, 2^24 -> ~5 s;
///  - transfer rows (dma, ring, gather; one copy each): ~3 ns, 2^30 -> ~3 s;
///  - bytes transferred, from and to device memory: ~0.5 ns, 2^34 -> ~9 s;
///  - vector-unit elements, weighted by their function's host cost
///    (vectorUnits: one unit is at most ~3.4 ns: an add 2.8 ns, exp 5.7 ns
///    for 2 units, tanh 14 ns for 5), 2^31 units -> at most ~7 s;
///  - matrix-unit operand and result elements (DLFloat16 rounding, decode and
///    encode): ~1.2 ns, 2^33 -> ~10 s;
///  - MACs (single-threaded SGEMM): ~0.02 ns, 2^38 -> ~6 s.
/// So no program the simulator accepts runs for more than about 12 s of one
/// host core (the simulator runs cores' compute in parallel when it may).
/// The compiler's programs stay well inside: its emitter stops at 2^21
/// instructions; a compiled 2048^3 matmul spends 6% of the budget, a 4096^3
/// one 43% (3.5 s), a 4096 x 4096 softmax 18%.
namespace budget {
inline constexpr int64_t kInstructions = int64_t{1} << 24;
inline constexpr int64_t kTransferRows = int64_t{1} << 30;
inline constexpr int64_t kTransferBytes = int64_t{1} << 34;
inline constexpr int64_t kVectorUnits = int64_t{1} << 31;
/// Units one element of vector instruction `in` spends: its function's host
/// cost (measured per element, one f32 instruction over 4M elements on one
/// x86-64 core) in units of ~3.4 ns, rounded up. A function not measured
/// (or not valid, before validation refuses it) counts as the dearest.
int64_t vectorUnits(const isa::Instr &in);
inline constexpr int64_t kMatrixElements = int64_t{1} << 33;
inline constexpr int64_t kMacs = int64_t{1} << 38;
} // namespace budget

struct Buffer {
  std::string name;
  isa::BufferKind kind = isa::BufferKind::scratch;
  isa::DType dtype = isa::DType::f32;
  isa::HostDType hostDType = isa::HostDType::f32;
  std::vector<int64_t> dims;
  uint64_t bytes = 0;
  std::vector<uint8_t> constant; ///< data of a constant buffer
};

struct Stream {
  uint32_t core = 0;
  std::vector<isa::Instr> instrs;
};

struct Program {
  uint64_t archFingerprint = 0;
  uint32_t numCores = 0;
  std::vector<Buffer> buffers;
  std::vector<Stream> streams;

  /// The binary file (docs/binary-format.md).
  std::vector<uint8_t> serialize() const;
  /// Parses a binary file; throws Error on any malformed byte.
  static Program parse(const uint8_t *data, size_t size);
  /// Checks the program against the card: structure, operand kinds and,
  /// over every iteration of every hardware loop, that each access stays
  /// inside its buffer or the usable LX. Throws Error naming the core and
  /// instruction. Returns how many bytes of LX each core's data can reach.
  std::vector<int64_t> validate(const Arch &arch) const;
  /// validate() for callers built without exceptions (the MLIR side):
  /// returns the error message, or an empty string if the program is valid.
  std::string check(const Arch &arch) const noexcept;
};

} // namespace spyre

#endif // SPYRE_ISA_PROGRAM_H
