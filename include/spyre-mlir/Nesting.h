//===- Nesting.h - refusing IR text the parser cannot take ------*- C++ -*-===//
//
// MLIR's parser, verifier, printer and walks recurse once per nested region,
// operation, attribute, type and parenthesis: text nested some thousands of
// levels deep overflows the stack and kills the process (spyre-opt, or the
// Python interpreter in Module.parse). A stack large enough for any input
// does not exist, and raising it only moves the crash, so every entry point
// that reads IR text from a user scans it first, in one linear pass without
// recursion, and refuses text nested deeper than kMaxNestingDepth.
//
// The scan counts brackets of all kinds ({ ( [ <) outside string literals and
// comments, as one depth: an upper bound of how deep anything can nest.
// Real kernels nest well under 32 (module, kernel, fused, generic, a map).
//
// The same scan refuses the one construct found (by scripts/fuzz.py) that
// aborts MLIR's parser: a dense array of index.
//
// Standard C++ only, so that the tools, the C API and the Python extension
// all use this one definition.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_NESTING_H
#define SPYRE_NESTING_H

#include <cstdint>
#include <string>
#include <string_view>

namespace mlir::spyre {

/// The deepest bracket nesting accepted in IR text (docs/lowering.md). Far
/// beyond real IR, and far below what overflows an 8 MiB stack (about 4,000
/// nested regions, or 20,000 nested attributes).
inline constexpr int kMaxNestingDepth = 256;

/// Empty if `text` nests at most kMaxNestingDepth deep; else a message with
/// the line and column (1-based) where it goes deeper. MLIR bytecode is not
/// text and is not checked.
inline std::string checkNesting(std::string_view text) {
  if (text.substr(0, 4) == std::string_view("ML\xefR", 4))
    return {};
  int64_t depth = 0, line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    char next = i + 1 < text.size() ? text[i + 1] : '\0';
    char prev = i > 0 ? text[i - 1] : '\0';
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"': // a string literal: skip to its closing quote
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line, lineStart = i + 1;
      }
      break;
    case '/':
      if (next == '/')
        while (i + 1 < text.size() && text[i + 1] != '\n')
          ++i;
      break;
    case '{':
    case '(':
    case '[':
    case '<':
      if (c == '<' && next == '=')
        break; // `<=` compares
      // MLIR 22's parser aborts on a dense array of `index` (an assertion in
      // parseDenseArrayAttr); refuse it the same way.
      if (c == '<' && i >= 5 && text.substr(i - 5, 5) == "array" &&
          text.find_first_not_of(" \t\n", i + 1) == text.find("index", i + 1))
        return "line " + std::to_string(line) + ", column " + std::to_string(i - lineStart + 1) +
               ": dense arrays of index (array<index: ...>) are not supported; use i64";
      if (++depth > kMaxNestingDepth)
        return "line " + std::to_string(line) + ", column " + std::to_string(i - lineStart + 1) +
               ": the input nests deeper than " + std::to_string(kMaxNestingDepth) +
               " levels (regions, attributes, types and parentheses together), the "
               "most spyre-mlir reads";
      break;
    case '}':
    case ')':
    case ']':
    case '>':
      if (c == '>' && (prev == '-' || next == '='))
        break; // `->` and `>=` close nothing
      depth = depth > 0 ? depth - 1 : 0;
      break;
    default:
      break;
    }
  }
  return {};
}

} // namespace mlir::spyre

#endif // SPYRE_NESTING_H
