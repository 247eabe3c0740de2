//===- InitAll.h - everything a Spyre tool registers ------------*- C++ -*-===//
//
// One list of the dialects and passes that spyre-opt and the Python bindings
// make available, so that both see the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_INITALL_H
#define SPYRE_INITALL_H

namespace mlir {
class DialectRegistry;
namespace spyre {

/// The spyre dialect and the upstream dialects its IR uses: arith and math
/// in generic bodies (what the Inductor export writes), affine for maps.
void registerAllDialects(DialectRegistry &registry);

/// The spyre passes and the upstream passes that pipelines use. Idempotent.
void registerAllPasses();

} // namespace spyre
} // namespace mlir

#endif // SPYRE_INITALL_H
