//===- Program.h - a program for the card, in memory -----------*- C++ -*-===//

#ifndef SPYRE_SIMULATOR_PROGRAM_H
#define SPYRE_SIMULATOR_PROGRAM_H

#include "Arch/Arch.h"
#include "Simulator/Isa.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace spyre {

/// Every rejected file, program or run raises this; Python sees ValueError
/// (bad program) or RuntimeError (failed run).
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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

#endif // SPYRE_SIMULATOR_PROGRAM_H
