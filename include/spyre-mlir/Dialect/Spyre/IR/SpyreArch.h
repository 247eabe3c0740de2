//===- SpyreArch.h - the architecture description in the IR -----*- C++ -*-===//
//
// The card description is looked up once (::spyre::Arch::lookupPath),
// attached to the module as the `spyre.arch` attribute by spyre-attach-arch,
// the first pass of spyre-compile, and read from there by every pass and by
// the binary writer: a compile sees one description, and its IR says which.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_IR_SPYREARCH_H
#define SPYRE_IR_SPYREARCH_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace spyre {
struct Arch;
}

namespace mlir {
class Operation;
namespace spyre {

/// The module attribute holding the description: a dictionary of its name
/// and every parameter by TOML key (`{card.cores = 32 : i64, ...}`).
inline constexpr StringLiteral kArchAttr = "spyre.arch";

/// The description as the `spyre.arch` attribute.
DictionaryAttr getArchAttr(MLIRContext *context, const ::spyre::Arch &arch);

/// Loads the description at ::spyre::Arch::lookupPath(path) (`path` if not
/// empty, else $SPYRE_ARCH, else the installed one). Emits an error on
/// `anchor` if it cannot be read.
std::optional<::spyre::Arch> loadArch(Operation *anchor, StringRef path);

/// The description a pass works for: the `spyre.arch` attribute of the
/// nearest module around (or at) `op`; without one (a pass run on its own),
/// the description that spyre-attach-arch would attach. Emits an error on
/// `op` if there is none or it is invalid.
std::optional<::spyre::Arch> getArch(Operation *op);

} // namespace spyre
} // namespace mlir

#endif // SPYRE_IR_SPYREARCH_H
