#!/usr/bin/env python3
"""Fuzzes the three entry points that read user input (issue 10):

  opt        mutated lit inputs (test/**/*.mlir) through `spyre-opt`, and
  compile    through `spyre-opt --spyre-compile`;
  translate  mutated hardware-level IR through `spyre-translate --spyre-hw-to-binary`;
  binary     mutated program binaries through the simulator (parse, load, run).

Every case runs in a process of its own with a time limit and a memory limit.
A case fails if that process dies of a signal, outlives the time limit, ends
in an unexpected Python exception (binaries), or succeeds on an input that is
refused by construction (unbalanced or too deeply nested text, a truncated or
bad-magic binary, an impossible core count or rank, a wrong checksum).

The time limit is on CPU time (20 s), so that a busy host does not turn slow
cases into hangs, with a wall-clock limit (10 times as long) for a case that
blocks without computing. A tool that cannot be started (a rebuild replacing
it mid-run) is retried for a while, then its cases count as unrunnable: the
run goes on and exits non-zero, and no regression input is saved for them.

Cases are deterministic: case i of seed s is the same on every run. CI runs
the default number (scripts/test.sh); `--cases N` runs longer, and failing
cases are saved as regression inputs under test/fuzz/ (replayed by
test/python/test_fuzz_regressions.py):

    python scripts/fuzz.py                     # CI: 2,400 cases, 2 processes
    python scripts/fuzz.py --cases 30000 --seed 7
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import multiprocessing
import os
import random
import re
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGRESSIONS = os.path.join(ROOT, "test", "fuzz")
ENTRIES = ("opt", "compile", "translate", "binary")
EXTENSION = {"opt": "mlir", "compile": "mlir", "translate": "mlir", "binary": "spyre"}
CI_CASES = 2400              # what CI runs: a few minutes on 2 cores
TIME_LIMIT = 20.0            # CPU seconds per case; real cases take well under one
# Wall-clock limit: this many times the CPU limit. At a load of 10 on 2 cores a
# case of 9.4 s of CPU took over 60 s (test/fuzz/binary-82f9ff7b8496.spyre.xz).
WALL_FACTOR = 10
TOOL_RETRY_SECONDS = 120     # how long an unstartable tool is retried (a rebuild)
# Bytes of address space per case; SPYRE_FUZZ_MEMORY_LIMIT=0 lifts it (for
# AddressSanitizer builds, which reserve terabytes of shadow memory).
MEMORY_LIMIT = int(os.environ.get("SPYRE_FUZZ_MEMORY_LIMIT", 4 << 30))
HEADER = 64                  # docs/binary-format.md
BUFFER_DESC = 104
INTERESTING = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256,
               1023, 1024, 4095, 4096, 65535, 65536, 1 << 20, (1 << 31) - 1, 1 << 31,
               (1 << 32) - 1, 1 << 32, 1 << 40, 1 << 62, (1 << 63) - 1, -1, -2, -(1 << 31)]
TYPES = ["f16", "bf16", "f32", "i1", "i8", "i32", "i64", "index", "f64"]


# ---------------------------------------------------------------- seeds


def tool(name: str) -> str:
    """A tool under test: SPYRE_TOOLS_DIR's (a sanitized build), else the installed one."""
    import spyre_mlir
    return os.path.join(os.environ.get("SPYRE_TOOLS_DIR") or spyre_mlir.tools_dir(), name)


def lit_chunks() -> list[str]:
    """The lit inputs, split where -split-input-file splits them."""
    chunks = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)):
        if os.sep + "fuzz" + os.sep in path:
            continue
        with open(path) as f:
            chunks += [c for c in re.split(r"^// -----\s*$", f.read(), flags=re.M) if c.strip()]
    return chunks


class ToolUnavailable(Exception):
    """A tool binary could not be started even after retrying."""


def spawn(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run, retrying while the tool cannot be started: a rebuild
    that replaces the binary makes exec fail for a moment (ETXTBSY, EACCES,
    ENOENT). Raises ToolUnavailable after TOOL_RETRY_SECONDS."""
    deadline = time.monotonic() + TOOL_RETRY_SECONDS
    delay = 0.5
    while True:
        try:
            return subprocess.run(cmd, **kwargs)
        except subprocess.TimeoutExpired:
            raise
        except (OSError, subprocess.SubprocessError) as e:
            if time.monotonic() > deadline:
                raise ToolUnavailable(f"{cmd[0]}: {type(e).__name__}: {e}") from e
            time.sleep(delay)
            delay = min(2 * delay, 8)


def compiled(chunk: str) -> str | None:
    out = spawn([tool("spyre-opt"), "--spyre-compile"], input=chunk, text=True,
                capture_output=True, timeout=60)
    return out.stdout if out.returncode == 0 and "spyre.hw.program" in out.stdout else None


def translated(hw: str) -> bytes | None:
    with tempfile.TemporaryDirectory() as d:
        out = spawn([tool("spyre-translate"), "--spyre-hw-to-binary", "-o",
                     os.path.join(d, "p.spyre")], input=hw, text=True,
                    capture_output=True, timeout=60)
        if out.returncode != 0:
            return None
        with open(os.path.join(d, "p.spyre"), "rb") as f:
            return f.read()


def build_seeds() -> dict[str, list]:
    text = lit_chunks()
    hw = [c for c in text if "spyre.hw.program" in c]
    hw += [h for h in map(compiled, [c for c in text if "spyre.kernel" in c]) if h]
    binaries = [b for b in map(translated, hw) if b]
    return {"text": text, "hw": hw, "binary": binaries}


# ---------------------------------------------------------------- mutations


def mutate_text(rng: random.Random, text: str) -> tuple[str, bool]:
    """A mutation of IR text, and whether the result must be refused."""
    lines = text.split("\n")
    kind = rng.randrange(12)
    if kind == 0:  # too deep for the parser: refused by construction
        depth = rng.choice([300, 5000])
        return "module {" * depth + text + "}" * depth, True
    if kind == 1:  # unbalanced: drop the last closing brace of the code
        code = [i for i, l in enumerate(lines) if "}" in l and not l.lstrip().startswith("//")]
        if code:
            i = code[-1]
            j = lines[i].rindex("}")
            lines[i] = lines[i][:j] + lines[i][j + 1:]
            return "\n".join(lines), True
    rounds = rng.choice([1, 1, 2, 3])
    for _ in range(rounds):
        kind = rng.randrange(9)
        numbers = list(re.finditer(r"(?<![\w#%@])-?\d+", text))
        if kind <= 2 and numbers:  # an integer becomes an interesting one
            m = rng.choice(numbers)
            text = text[:m.start()] + str(rng.choice(INTERESTING)) + text[m.end():]
        elif kind == 3:  # an element type becomes another
            found = list(re.finditer(r"\b(" + "|".join(TYPES) + r")\b", text))
            if found:
                m = rng.choice(found)
                text = text[:m.start()] + rng.choice(TYPES) + text[m.end():]
        elif kind == 4:  # a shape gains or loses dimensions
            found = list(re.finditer(r"<((?:\d+|\?)x)+", text))
            if found:
                m = rng.choice(found)
                dims = m.group(0)[1:]
                new = dims * rng.choice([2, 3, 5]) if rng.random() < 0.7 else ""
                text = text[:m.start() + 1] + new + text[m.end():]
        elif kind == 5:  # a line dropped, duplicated or swapped
            lines = text.split("\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            op = rng.randrange(3)
            if op == 0:
                del lines[i]
            elif op == 1:
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == 6:  # a word replaced by another word of the text
            words = list(re.finditer(r"[A-Za-z_][\w.]*", text))
            if words:
                m = rng.choice(words)
                text = text[:m.start()] + rng.choice(words).group(0) + text[m.end():]
        elif kind == 7:  # a loop variable or SSA value swapped
            found = list(re.finditer(r"\b(d\d|%\w+)\b", text))
            if found:
                m = rng.choice(found)
                text = text[:m.start()] + rng.choice(found).group(0) + text[m.end():]
        else:  # bytes deleted, duplicated or garbled
            if text:
                i = rng.randrange(len(text))
                n = rng.randint(1, 8)
                op = rng.randrange(3)
                if op == 0:
                    text = text[:i] + text[i + n:]
                elif op == 1:
                    text = text[:i] + text[i:i + n] + text[i:]
                else:
                    text = text[:i] + "".join(rng.choice("{}()[]<>:,=%#@!x0-") for _ in range(n)) \
                        + text[i:]
    return text, False


def with_crc(data: bytearray) -> bytearray:
    if len(data) >= HEADER:
        struct.pack_into("<I", data, 24, zlib.crc32(bytes(data[HEADER:])) & 0xFFFFFFFF)
    return data


def mutate_binary(rng: random.Random, binary: bytes) -> tuple[bytes, bool]:
    """A mutation of a program binary, and whether it must be refused."""
    data = bytearray(binary)
    kind = rng.randrange(10)
    if kind == 0:  # truncated
        return bytes(data[:rng.randrange(len(data))]), True
    if kind == 1:  # bad magic
        data[rng.randrange(8)] ^= 1 << rng.randrange(8)
        return bytes(data), True
    if kind == 2:  # an impossible core count (the card has 32)
        struct.pack_into("<I", data, 40, rng.choice([0, 33, 1 << 16, 1 << 28, (1 << 32) - 1]))
        return bytes(data), True
    if kind == 3:  # a payload byte changed, checksum left stale
        i = rng.randrange(HEADER, len(data))
        data[i] ^= 1 << rng.randrange(8)
        return bytes(data), True
    if kind == 4:  # a buffer of rank > 8, checksum fixed
        buffers = section(data, 2)
        if buffers is not None and struct.unpack_from("<I", data, buffers)[0]:
            struct.pack_into("<I", data, buffers + 8 + 16, rng.choice([9, 64, (1 << 32) - 1]))
            return bytes(with_crc(data)), True
    # Below: the checksum is fixed, so the mutation reaches the parser and
    # the validator; any outcome but a crash or hang is fine.
    for _ in range(rng.choice([1, 1, 2, 4])):
        op = rng.randrange(5)
        if op == 0:  # a field of 4 or 8 bytes becomes an interesting value
            width = rng.choice([4, 8])
            i = rng.randrange(0, len(data) - width + 1) & ~(width - 1)
            value = rng.choice(INTERESTING) & ((1 << (8 * width)) - 1)
            data[i:i + width] = value.to_bytes(width, "little")
        elif op == 1:  # random bits
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif op == 2:  # a byte set to an interesting byte
            data[rng.randrange(len(data))] = rng.choice([0, 1, 2, 0x7F, 0x80, 0xFE, 0xFF])
        elif op == 3:  # an instruction record duplicated over another (352 bytes)
            code = section(data, 4)
            if code is not None and len(data) > code + 8 + 16 + 2 * 352:
                a = rng.randrange(code, len(data) - 352)
                b = rng.randrange(code, len(data) - 352)
                data[b:b + 352] = data[a:a + 352]
        else:  # an instruction's shape value (sizes, a loop's trips) grows: work
            record = instruction(data, rng)
            if record is not None:
                i = record + 40 + 8 * rng.randrange(4)
                value = rng.choice([1 << rng.randrange(33), rng.choice(INTERESTING)])
                data[i:i + 8] = (value & ((1 << 64) - 1)).to_bytes(8, "little")
    if rng.random() < 0.2:  # the file size field agrees with a grown file
        data += bytes(rng.randrange(1, 64))
        struct.pack_into("<Q", data, 16, len(data))
    return bytes(with_crc(data)), False


def instruction(data: bytearray, rng: random.Random) -> int | None:
    """Offset of a random instruction record of a random stream, if any."""
    code = section(data, 4)
    try:
        streams = struct.unpack_from("<I", data, code)[0] if code is not None else 0
        if not streams:
            return None
        _, count, offset = struct.unpack_from("<IIQ", data, code + 8 + 16 * rng.randrange(
            min(streams, 64)))
        record = code + offset + 352 * rng.randrange(max(count, 1))
        return record if count and record + 352 <= len(data) else None
    except struct.error:
        return None


def section(data: bytearray, kind: int) -> int | None:
    """Offset of a section's payload (if the table is readable)."""
    try:
        count = struct.unpack_from("<I", data, 28)[0]
        for i in range(min(count, 16)):
            k, _, offset, _ = struct.unpack_from("<IIQQ", data, HEADER + 24 * i)
            if k == kind and offset < len(data):
                return offset
    except struct.error:
        pass
    return None


def make_case(seeds: dict, seed: int, index: int) -> tuple[str, bytes, bool]:
    """Case `index` of `seed`: (entry, input, refused by construction)."""
    rng = random.Random(f"{seed}:{index}")
    entry = ENTRIES[index % len(ENTRIES)]
    if entry == "binary":
        data, refused = mutate_binary(rng, rng.choice(seeds["binary"]))
        return entry, data, refused
    corpus = seeds["hw"] if entry == "translate" else seeds["text"]
    text, refused = mutate_text(rng, rng.choice(corpus))
    return entry, text.encode(), refused


# ---------------------------------------------------------------- running


def limit_resources(cpu_seconds: float):
    """In the case's process: its memory and CPU time (SIGXCPU past the limit)."""
    if MEMORY_LIMIT:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    cpu = max(1, int(cpu_seconds + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))  # SIGKILL 5 s later
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def out_of_time(signum: int) -> bool:
    return signum in (signal.SIGXCPU, signal.SIGKILL)


#: A crash of upstream MLIR's parser, not of ours: after "redefinition of
#: block" in a region whose first block's argument has resolved a forward
#: reference of the enclosing region, the parser destroys the block while
#: that use remains. Upstream mlir-opt crashes the same way on
#:     "builtin.module"() ({
#:       %e = "math.exp"(%v) : (f32) -> f32
#:       linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
#:           iterator_types = ["parallel"]} outs(%a : memref<8xf32>) {
#:       ^bb0(%v: f32):
#:       ^bb0(%v: f32):
#: (found by seed 0 through spyre.generic, whose region parses the same
#: way). Such a case counts as `upstream`, apart from our failures.
UPSTREAM_PARSER_CRASH = ("redefinition of block", "Cannot destroy a value that still has uses")


def run_tool(entry: str, data: bytes, timeout: float) -> tuple[str, str]:
    """Runs a text case; returns (outcome, detail): ok, error, crash, hang,
    or upstream (UPSTREAM_PARSER_CRASH)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "case.mlir")
        with open(path, "wb") as f:
            f.write(data)
        if entry == "translate":
            cmd = [tool("spyre-translate"), "--spyre-hw-to-binary", path, "-o",
                   os.path.join(d, "out.spyre")]
        else:
            cmd = [tool("spyre-opt"), path, "-o", os.devnull]
            if entry == "compile":
                cmd.append("--spyre-compile")
        try:
            out = spawn(cmd, capture_output=True, timeout=timeout * WALL_FACTOR,
                        preexec_fn=lambda: limit_resources(timeout))
        except subprocess.TimeoutExpired:
            return "hang", f"more than {timeout * WALL_FACTOR:g} s of wall-clock time"
    stderr = out.stderr.decode(errors="replace")
    if out.returncode < 0 and out_of_time(-out.returncode):
        return "hang", f"more than {timeout:g} s of CPU time"
    if out.returncode < 0 or "Stack dump" in stderr or "LLVM ERROR" in stderr:
        if all(sign in stderr for sign in UPSTREAM_PARSER_CRASH):
            return "upstream", stderr[:200]
        return "crash", f"exit {out.returncode}: {stderr[-2000:]}"
    return ("ok" if out.returncode == 0 else "error"), stderr[:200]


def attempt_binary(data: bytes) -> str:
    """Parses, validates and runs a binary (in the case's own process)."""
    import numpy as np
    from spyre_mlir import simulator as sim
    arch = sim.default_arch()
    try:
        program = sim.Program.parse(data)
        simulator = sim.Simulator(arch)
        simulator.load(program)
        keep = []
        for index, buf in enumerate(program.buffers):
            if buf["kind"] in (sim.BufferKind.input, sim.BufferKind.output, sim.BufferKind.inout):
                array = np.zeros(buf["bytes"], np.uint8)
                keep.append(array)
                simulator.bind(index, array)
        simulator.run()
        return "ok"
    except (sim.ProgramError, sim.SimulationError):
        return "error"
    except MemoryError:
        return "error"  # the memory limit of the case, not a bug


def run_binary(data: bytes, timeout: float) -> tuple[str, str]:
    """Runs a binary case in a forked child (the simulator is imported once
    per worker; a fork costs a millisecond, a new interpreter a tenth of a
    second)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 3
        try:
            limit_resources(timeout)
            result = attempt_binary(data)
            code = 0
        except BaseException as e:  # an unexpected exception is a failure
            result = f"exception {type(e).__name__}: {e}"
        os.write(write, result.encode()[:4000])
        os._exit(code)
    os.close(write)
    deadline = time.monotonic() + timeout * WALL_FACTOR
    pause = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return "hang", f"more than {timeout * WALL_FACTOR:g} s of wall-clock time"
        time.sleep(pause)
        pause = min(2 * pause, 0.02)
    with os.fdopen(read, "rb") as f:
        result = f.read().decode(errors="replace")
    if os.WIFSIGNALED(status) and out_of_time(os.WTERMSIG(status)):
        return "hang", f"more than {timeout:g} s of CPU time"
    if os.WIFSIGNALED(status):
        return "crash", f"signal {os.WTERMSIG(status)}"
    if result.startswith("exception"):
        return "crash", result
    return result or "crash", "" if result else "no result"


def check(entry: str, data: bytes, refused: bool, timeout: float = TIME_LIMIT) -> tuple[str, str]:
    """Runs one case: (outcome, detail) where outcome is ok or error (fine),
    or crash, hang, accepted (a failure)."""
    if entry == "binary":
        outcome, detail = run_binary(data, timeout)
    else:
        outcome, detail = run_tool(entry, data, timeout)
    if refused and outcome == "ok":
        return "accepted", "succeeded on an input refused by construction"
    return outcome, detail


def _worker_init():
    # The simulator's matmuls would start threads of their own: one core per case.
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = "1"
    from spyre_mlir import simulator  # noqa: F401  (imported once, before forking)


_SEEDS: dict = {}


def _run_case(args):
    seed, index, timeout = args
    entry, data, refused = make_case(_SEEDS, seed, index)
    start = time.monotonic()
    try:
        outcome, detail = check(entry, data, refused, timeout)
    except ToolUnavailable as e:
        outcome, detail = "unrunnable", str(e)
    except Exception as e:  # a bug of the harness: report it, keep going
        outcome, detail = "harness", f"{type(e).__name__}: {e}"
    return index, entry, data, refused, outcome, detail, time.monotonic() - start


COMPRESS_ABOVE = 64 << 10  # bytes; larger regression inputs are kept as .xz


def save(entry: str, data: bytes, refused: bool) -> str:
    """Keeps a failing case as a regression input:
    test/fuzz/ENTRY-HASH[.refused].EXT, compressed (.xz) when large."""
    import lzma
    os.makedirs(REGRESSIONS, exist_ok=True)
    name = f"{entry}-{hashlib.sha1(data).hexdigest()[:12]}{'.refused' if refused else ''}" \
           f".{EXTENSION[entry]}"
    if len(data) > COMPRESS_ABOVE:
        name, data = name + ".xz", lzma.compress(data, preset=9)
    path = os.path.join(REGRESSIONS, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def read_regression(path: str) -> bytes:
    """A saved regression input's bytes (decompressed)."""
    import lzma
    with open(path, "rb") as f:
        data = f.read()
    return lzma.decompress(data) if path.endswith(".xz") else data


def for_this_card(data: bytes) -> bytes:
    """A saved binary, stamped with the current card description's fingerprint
    (its checksum fixed): a regression input must reach the validator and the
    simulator after the description changes, not be refused for being built
    for another card. Binaries whose header or checksum is broken stay as
    they are, so what was refused by construction still is."""
    from spyre_mlir import simulator as sim
    if len(data) < HEADER or data[:8] != b"SPYREBIN" \
            or struct.unpack_from("<Q", data, 16)[0] != len(data) \
            or struct.unpack_from("<I", data, 24)[0] != zlib.crc32(data[HEADER:]) & 0xFFFFFFFF:
        return data
    out = bytearray(data)
    struct.pack_into("<Q", out, 32, sim.default_arch().fingerprint)
    return bytes(with_crc(out))


def regression_cases() -> list[tuple[str, str, bool]]:
    """The saved regression inputs: (path, entry, refused by construction)."""
    cases = []
    for path in sorted(glob.glob(os.path.join(REGRESSIONS, "*-*.*"))):
        name = os.path.basename(path)
        entry = name.split("-", 1)[0]
        if entry in ENTRIES:
            cases.append((path, entry, ".refused." in name))
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int,
                        help=f"cases to run, spread over the entry points (default: {CI_CASES})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the cases (default: 0)")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default: 2)")
    parser.add_argument("--timeout", type=float, default=TIME_LIMIT,
                        help=f"seconds per case before it counts as a hang ({TIME_LIMIT:g})")
    parser.add_argument("--save", action=argparse.BooleanOptionalAction, default=None,
                        help="save failing cases under test/fuzz/ (default: when --cases is given)")
    args = parser.parse_args(argv)
    save_failures = args.save if args.save is not None else args.cases is not None
    cases = CI_CASES if args.cases is None else args.cases

    start = time.monotonic()
    _SEEDS.update(build_seeds())
    print(f"fuzz: seeds: {len(_SEEDS['text'])} lit inputs, {len(_SEEDS['hw'])} hardware-level "
          f"programs, {len(_SEEDS['binary'])} binaries ({time.monotonic() - start:.1f} s)",
          flush=True)
    outcomes: Counter = Counter()
    slowest = (0.0, "")
    failures, unrunnable = [], []
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(args.jobs, initializer=_worker_init) as pool:
        work = ((args.seed, i, args.timeout) for i in range(cases))
        for done, (index, entry, data, refused, outcome, detail, seconds) in enumerate(
                pool.imap_unordered(_run_case, work, chunksize=8), 1):
            outcomes[entry, outcome] += 1
            slowest = max(slowest, (seconds, f"case {index} ({entry})"))
            if outcome in ("unrunnable", "harness"):
                unrunnable.append(index)
                print(f"fuzz: case {index} ({entry}) not run: {outcome}: {detail.strip()[:500]}",
                      flush=True)
            if outcome in ("crash", "hang", "accepted"):
                where = save(entry, data, refused) if save_failures else "not saved"
                failures.append(index)
                print(f"fuzz: FAIL case {index} ({entry}, {outcome}): {detail.strip()[:500]} "
                      f"[{where}]", flush=True)
            if done % 1000 == 0 or done == CI_CASES:
                print(f"fuzz: {done} cases, {time.monotonic() - start:.0f} s", flush=True)
    elapsed = time.monotonic() - start
    for entry in ENTRIES:
        counts = {o: n for (e, o), n in sorted(outcomes.items()) if e == entry}
        print(f"fuzz: {entry:<9} {sum(counts.values()):>6} cases: {counts}")
    print(f"fuzz: {cases} cases (seed {args.seed}) in {elapsed:.0f} s, "
          f"{len(failures)} failures (crashes, hangs, refused inputs accepted), "
          f"{len(unrunnable)} not run; slowest case {slowest[0]:.1f} s: {slowest[1]}")
    return 1 if failures else 2 if unrunnable else 0


if __name__ == "__main__":
    sys.exit(main())
