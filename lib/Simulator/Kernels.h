//===- Kernels.h - functional semantics of the instructions ----*- C++ -*-===//
//
// What each engine instruction computes, separate from when (Simulator.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_SIMULATOR_KERNELS_H
#define SPYRE_SIMULATOR_KERNELS_H

#include "spyre-mlir/Isa/DLFloat16.h"
#include "spyre-mlir/Isa/Isa.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spyre {

/// Device memory (one region per buffer) and every core's LX.
struct Memory {
  std::vector<uint8_t *> buffers;
  std::vector<uint64_t> bufferBytes;
  std::vector<std::vector<uint8_t>> lx;

  /// Address of bytes [lo, hi) around the operand's offset; throws Error if
  /// any of them lies outside the operand's memory. `core` picks the LX.
  uint8_t *at(const isa::Operand &o, uint32_t core, int64_t lo, int64_t hi) const;
};

/// Runs one engine instruction whose operand offsets already include the
/// loop increments. Throws Error; the caller adds where it happened.
/// Returns how many finite values became infinities when rounded to
/// DLFloat16 (stored, or fed to the matrix unit).
int64_t execute(const isa::Instr &in, uint32_t core, Memory &mem, const DLFloat16 &dl);

/// Whether a vector instruction runs at the transcendental rate.
bool isTranscendental(const isa::Instr &in);

} // namespace spyre

#endif // SPYRE_SIMULATOR_KERNELS_H
