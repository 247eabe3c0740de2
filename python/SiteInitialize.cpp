//===- SiteInitialize.cpp - load Spyre into every MLIR context ------------===//
//
// spyre_mlir._mlir_libs imports this module when it starts and calls
// register_dialects(), so that every Context() knows the spyre dialect and
// the upstream dialects the compiler uses, and PassManager.parse() knows our
// passes.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir-c/Dialects.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

NB_MODULE(_site_initialize_0, m) {
  m.doc() = "Registers the Spyre dialect and passes in every context.";
  spyreRegisterPasses();
  m.def("register_dialects", [](MlirDialectRegistry registry) {
    spyreRegisterDialects(registry);
  });
}
