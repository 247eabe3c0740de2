//===- ToBinary.h - hardware-level IR to a program binary -------*- C++ -*-===//

#ifndef SPYRE_TARGET_SPYREBINARY_TOBINARY_H
#define SPYRE_TARGET_SPYREBINARY_TOBINARY_H

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <vector>

namespace spyre {
struct Arch;
}

namespace mlir {
class Operation;
namespace spyre {
class HwProgramOp;

/// Writes one hardware-level program as a binary for `arch` (checked by the
/// simulator's validator); emits a diagnostic on the program if invalid.
LogicalResult writeProgram(HwProgramOp program, const ::spyre::Arch &arch,
                           std::vector<uint8_t> &binary);

/// Writes the one `spyre.hw.program` under `root` as a program binary
/// (docs/binary-format.md) for `arch`, through the simulator's
/// ProgramBuilder, and checks it with the simulator's validator. Emits a
/// diagnostic and fails if the IR or the program is invalid.
LogicalResult translateToBinary(Operation *root, const ::spyre::Arch &arch,
                                std::vector<uint8_t> &binary);

/// Registers `--spyre-hw-to-binary` with mlir-translate style tools.
void registerToBinaryTranslation();

} // namespace spyre
} // namespace mlir

#endif // SPYRE_TARGET_SPYREBINARY_TOBINARY_H
