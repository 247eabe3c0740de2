//===- Passes.h - passes over hardware-level programs -----------*- C++ -*-===//

#ifndef SPYRE_TARGET_PASSES_H
#define SPYRE_TARGET_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::spyre {

#define GEN_PASS_DECL
#include "spyre-mlir/Target/SpyreBinary/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "spyre-mlir/Target/SpyreBinary/Passes.h.inc"

} // namespace mlir::spyre

#endif // SPYRE_TARGET_PASSES_H
