//===- DeviceTypes.h - element types and sizes on the card ------*- C++ -*-===//

#ifndef SPYRE_TRANSFORMS_DEVICETYPES_H
#define SPYRE_TRANSFORMS_DEVICETYPES_H

#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"

#include <cstdint>

namespace spyre {
struct Arch;
}

namespace mlir::spyre {

/// The element type an MLIR scalar type has on the card (isa::DType).
uint8_t deviceDType(Type type);
int64_t deviceDTypeBytes(uint8_t dtype);

/// Checks that every buffer of `kernel` (arguments and temporaries) can
/// exist on the card: a rank the program binary holds and no more bytes than
/// the card's usable device memory. The schedule passes check this first, so
/// that sizes no card holds are refused before any tile is searched.
LogicalResult checkBuffersFit(KernelOp kernel, const ::spyre::Arch &arch);

/// Whether every buffer operand of `op` has a static shape and is stored by
/// rows, as plans that address whole rows need; else an error on `op`.
LogicalResult checkStaticRowMajor(Operation *op);

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_DEVICETYPES_H
