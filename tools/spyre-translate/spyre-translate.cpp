//===- spyre-translate.cpp - Spyre IR to and from other formats -----------===//
//
// mlir-translate with the Spyre translations: `--spyre-hw-to-binary` writes a
// hardware-level program as a binary for spyre-run and the simulator.
//
// Input nested too deeply for the parser's recursion is refused before
// mlirTranslateMain parses it (spyre-mlir/Nesting.h). mlirTranslateMain reads the
// input itself and has no hook before parsing, so the input is found in argv
// here (the one positional argument; `-o` takes the next one) and, when it is
// stdin, read and put back as an in-memory file on descriptor 0.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/Nesting.h"
#include "spyre-mlir/Target/SpyreBinary/ToBinary.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace {

/// The input file named on the command line ("-" for stdin).
std::string inputArgument(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-o") {
      ++i;
      continue;
    }
    if (arg == "-" || arg.empty() || arg[0] != '-')
      return arg;
  }
  return "-";
}

/// Reads all of stdin and makes descriptor 0 an in-memory file with the same
/// bytes, for mlirTranslateMain to read again.
bool readStdinAndRewind(std::string &text) {
  text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  int fd = memfd_create("spyre-translate-stdin", 0);
  if (fd < 0)
    return false;
  for (size_t done = 0; done < text.size();) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return lseek(fd, 0, SEEK_SET) == 0 && dup2(fd, 0) == 0 && close(fd) == 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string input = inputArgument(argc, argv), text;
  if (input == "-") {
    if (!isatty(0) && !readStdinAndRewind(text)) {
      std::cerr << "spyre-translate: error: cannot read the input from stdin\n";
      return 1;
    }
  } else {
    std::ifstream file(input, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  } // an unreadable file is reported by mlirTranslateMain
  std::string tooDeep = mlir::spyre::checkNesting(text);
  if (!tooDeep.empty()) {
    std::cerr << (input == "-" ? "<stdin>" : input) << ": error: " << tooDeep << "\n";
    return 1;
  }
  mlir::spyre::registerToBinaryTranslation();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "Spyre translation driver\n")) ? 1 : 0;
}
