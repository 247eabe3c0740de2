"""The C++ headers have one include root (docs/architecture.md, Headers).

A project header is included by its path under include/ with the project's
prefix ("spyre-mlir/...", the C API "spyre-mlir-c/..."), or, if it is private
to one library, by its bare name from beside it; mlir_dialects/ holds the
TableGen definitions and no header.
"""

import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = os.path.join(ROOT, "include")
EXTERNAL = ("mlir/", "mlir-c/", "llvm/", "nanobind/")
GENERATED = (".h.inc", ".cpp.inc")


def _cpp_files():
    for top in ("include", "lib", "tools", "python"):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith((".h", ".cpp")):
                    yield os.path.join(folder, name)


def test_no_header_in_mlir_dialects():
    headers = [os.path.join(folder, name)
               for folder, _, names in os.walk(os.path.join(ROOT, "mlir_dialects"))
               for name in names if name.endswith((".h", ".hpp", ".inc"))]
    assert not headers


def test_project_headers_are_included_by_their_prefixed_path():
    wrong = []
    for path in _cpp_files():
        for line in open(path, encoding="utf-8"):
            match = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not match:
                continue
            name = match.group(1)
            if name.startswith(EXTERNAL):
                continue
            if name.startswith(("spyre-mlir/", "spyre-mlir-c/")):
                ok = name.endswith(GENERATED) or os.path.isfile(os.path.join(INCLUDE, name))
            else:  # private: beside the file that includes it
                ok = "/" not in name and os.path.isfile(os.path.join(os.path.dirname(path), name))
            if not ok:
                wrong.append(f"{os.path.relpath(path, ROOT)}: {name}")
    assert not wrong, "\n".join(wrong)
