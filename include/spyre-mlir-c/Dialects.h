//===- Dialects.h - C API of the Spyre dialect --------------------*- C -*-===//
//
// What the Python bindings need: the dialect handle, registration of the
// dialects and passes a Spyre context uses, and the dialect's own types and
// attributes.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_C_DIALECTS_H
#define SPYRE_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Spyre, spyre);

/// Inserts the spyre dialect and the upstream dialects the export and the
/// lowering use (func, arith, math, memref, scf, affine, tensor, linalg).
MLIR_CAPI_EXPORTED void spyreRegisterDialects(MlirDialectRegistry registry);

/// Registers the spyre passes and the upstream passes pipelines use
/// (canonicalize, cse, ...), so that PassManager.parse finds them.
MLIR_CAPI_EXPORTED void spyreRegisterPasses(void);

/// Memory spaces, as in the `MemorySpace` enum.
enum SpyreMemorySpace { SpyreMemorySpaceDram = 0, SpyreMemorySpaceLx = 1 };

MLIR_CAPI_EXPORTED bool spyreTypeIsABuffer(MlirType type);
MLIR_CAPI_EXPORTED MlirTypeID spyreBufferTypeGetTypeID(void);
/// `layout` may be null (row-major). Returns a null type and emits a
/// diagnostic if the parameters are invalid.
MLIR_CAPI_EXPORTED MlirType spyreBufferTypeGetChecked(
    MlirLocation loc, intptr_t rank, const int64_t *shape,
    MlirType elementType, MlirAttribute layout, int memorySpace);
MLIR_CAPI_EXPORTED MlirAttribute spyreBufferTypeGetLayout(MlirType type);
MLIR_CAPI_EXPORTED int spyreBufferTypeGetMemorySpace(MlirType type);

MLIR_CAPI_EXPORTED bool spyreAttributeIsALayout(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirTypeID spyreLayoutAttrGetTypeID(void);
MLIR_CAPI_EXPORTED MlirAttribute spyreLayoutAttrGetChecked(
    MlirLocation loc, intptr_t rank, const int64_t *order, int64_t stick);
MLIR_CAPI_EXPORTED intptr_t spyreLayoutAttrGetRank(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t spyreLayoutAttrGetOrder(MlirAttribute attr,
                                                   intptr_t pos);
MLIR_CAPI_EXPORTED int64_t spyreLayoutAttrGetStick(MlirAttribute attr);

/// Writes the one spyre.hw.program under `op` as a program binary for the
/// architecture description at `archPath` (empty: the module's `spyre.arch`,
/// else the one Arch::lookupPath finds). Calls
/// `onBytes` with the binary on success, or `onError` with the diagnostics.
MLIR_CAPI_EXPORTED MlirLogicalResult spyreTranslateToBinary(
    MlirOperation op, MlirStringRef archPath,
    void (*onBytes)(MlirStringRef bytes, void *userData),
    void (*onError)(MlirStringRef message, void *userData), void *userData);

/// The stages of `spyre-compile`, in order: the stage table of
/// Spyre/Pipelines/Pipelines.h. Names are the values of `stop-after`.
MLIR_CAPI_EXPORTED intptr_t spyreCompileStageCount(void);
MLIR_CAPI_EXPORTED MlirStringRef spyreCompileStageName(intptr_t pos);
/// What the IR has after the stage.
MLIR_CAPI_EXPORTED MlirStringRef spyreCompileStageResult(intptr_t pos);

#ifdef __cplusplus
}
#endif

#endif // SPYRE_C_DIALECTS_H
