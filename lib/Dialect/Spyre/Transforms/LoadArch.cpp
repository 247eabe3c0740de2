//===- LoadArch.cpp - the architecture description of a pass --------------===//

#include "Arch/Arch.h"
#include "Spyre/Transforms/Passes.h"

std::optional<::spyre::Arch> mlir::spyre::loadArch(Operation *anchor, StringRef path) {
  std::string error;
  std::optional<::spyre::Arch> arch =
      ::spyre::Arch::load(path.empty() ? ::spyre::Arch::defaultPath() : path.str(), error);
  if (!arch)
    anchor->emitError() << error;
  return arch;
}
