"""A kernel's PTX or SASS, built exactly as gemmbench builds it, and the
instruction mix of its main loop.

The text comes from nvcc run on the same expanded source, with the same
options and target as the cubin a run loads (``gemmbench.gpu.compile``),
so it needs no GPU: only nvcc, plus ``nvdisasm`` or ``cuobjdump`` for SASS.
Each runs through ``procs.run`` (a time limit, stdin from /dev/null, its own
process group killed whole): ``NVCC_SECONDS`` and ``DISASSEMBLE_SECONDS``,
overridden by ``GEMMBENCH_NVCC_TIMEOUT`` and ``GEMMBENCH_<TOOL>_TIMEOUT``.

The main loop. Both listings are straight-line code with branches: a branch
whose target lies at or before it closes a loop, whose body is everything
from the target to the branch. The main loop is the loop body holding the most
math instructions (FFMA, HMMA, HGMMA, ... in SASS; fma/mma/wgmma in PTX); among
loops with equally many, the shortest (the innermost one around them). In a
GEMM the math sits in the K loop, so this is the K loop, with its loads,
stores and barriers.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .. import procs
from ..errors import UserError
from ..gpu.compile import NVCC_SECONDS, expand_source, nvcc_options, target_for
from ..spec import KernelSpec, Params

PIP_EXTRA = "pip install 'gemmbench[asm]'"
DISASSEMBLERS = ("nvdisasm", "cuobjdump")  # either prints SASS from a cubin
DISASSEMBLE_SECONDS = 120.0

_ARCH = re.compile(r"^sm_(\d+)(\d)[af]?$")  # the last digit is the minor version


def parse_arch(arch: str) -> tuple[int, int]:
    """'sm_90' or 'sm_90a' -> (9, 0). Architecture-specific rungs get the 'a'
    target on their own (compile.target_for), so both spellings mean the GPU."""
    match = _ARCH.match(arch)
    if not match:
        raise UserError(f"--arch {arch!r} is not a GPU architecture like sm_80, sm_90 or sm_90a")
    return int(match.group(1)), int(match.group(2))


# --------------------------------------------------------------------------
# tools
# --------------------------------------------------------------------------

def find_tool(name: str) -> str | None:
    """The toolkit's tool on PATH (or under CUDA_HOME), else the one an NVIDIA
    wheel (gemmbench[asm]) installed beside this Python."""
    found = shutil.which(name)
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    roots += [os.path.join(p, "nvidia") for p in sys.path if p]
    for root in filter(None, roots):
        for candidate in (os.path.join(root, "bin", name), *sorted(glob.glob(os.path.join(root, "*", "bin", name)))):
            if os.access(candidate, os.X_OK):
                return candidate
    return None


def _require(names: tuple[str, ...], what: str, hint: str) -> tuple[str, str]:
    for name in names:
        path = find_tool(name)
        if path:
            return name, path
    raise UserError(f"{what} needs {' or '.join(names)}, found on neither PATH nor the NVIDIA wheels: {hint}")


def _run(cmd: list[str], tool: str, what: str, seconds: float) -> procs.Completed:
    """``tool`` (nvcc, nvdisasm, cuobjdump) under the subprocess policy; a
    non-zero exit is one line with the tool's last line."""
    done = procs.run(cmd, tool=tool, limit=procs.limit(tool, seconds),
                     hint=f"run {shlex.join([tool, *cmd[1:]])[:120]} by hand to see why")
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise UserError(f"{what} failed: {message[-1] if message else f'exit {done.returncode}'}")
    return done


# --------------------------------------------------------------------------
# building the listing
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Listing:
    """The assembly of one build: ``kind`` is "ptx" or "sass"."""

    kind: str
    text: str
    command: str  # the nvcc command line that built it (source file name aside)


def nvcc_command(spec: KernelSpec, compute_capability: tuple[int, int], params: Params | None, kind: str,
                 source: str, output: str) -> list[str]:
    """nvcc with the tool's options and target: a cubin for SASS, or the PTX
    of the same target's virtual architecture (compute_90a for sm_90a)."""
    arch, code = target_for(spec, compute_capability)
    if kind == "ptx":
        target = ["-ptx", "-arch", arch.replace("sm_", "compute_")]
    else:
        target = ["-cubin", "-arch", arch, *(["-code", code] if code else [])]
    return ["nvcc", *target, *nvcc_options(spec, params), "-o", output, source]


def build_listing(spec: KernelSpec, compute_capability: tuple[int, int], params: Params | None,
                  kind: str = "sass") -> Listing:
    if kind not in ("ptx", "sass"):
        raise ValueError(kind)
    nvcc = find_tool("nvcc")
    if nvcc is None:
        raise UserError("asm needs nvcc (the CUDA toolkit) on PATH")
    tool = _require(DISASSEMBLERS, "SASS", PIP_EXTRA) if kind == "sass" else None
    with tempfile.TemporaryDirectory(prefix="gemmbench-asm-") as tmp:
        source = os.path.join(tmp, f"{Path(spec.source).stem}.cu")
        Path(source).write_text(expand_source(spec))
        output = os.path.join(tmp, "kernel." + ("ptx" if kind == "ptx" else "cubin"))
        cmd = nvcc_command(spec, compute_capability, params, kind, source, output)
        _run([nvcc, *cmd[1:]], "nvcc", f"nvcc for {spec.source}", NVCC_SECONDS)
        if kind == "ptx":
            text = Path(output).read_text()
        else:
            name, path = tool
            args = [path, "-c", output] if name == "nvdisasm" else [path, "-sass", output]
            text = _run(args, name, name, DISASSEMBLE_SECONDS).stdout
    shown = " ".join(cmd[:-3] + [os.path.basename(source)])
    return Listing(kind, text, shown)


# --------------------------------------------------------------------------
# parsing: functions, instructions, loops
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Instruction:
    opcode: str  # as written, modifiers included ("LDS.U.128", "fma.rn.f32")
    target: str | None = None  # a branch's label or address


@dataclass
class Function:
    name: str
    instructions: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # label or address -> instruction index


_SASS_FUNCTION = (re.compile(r"^\s*Function : (\S+)"), re.compile(r"^\.text\.(\S+):\s*$"))
_SASS_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)([^;]*);")
_PTX_FUNCTION = re.compile(r"\.entry\s+(\w+)\s*\(")
_PTX_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_.]*)\s*([^;]*);")
_LABEL = re.compile(r"^\s*([$.\w]+):\s*$")


def _parse(lines, function_name, instruction) -> list[Function]:
    """The skeleton both listings share: a line that opens a function, a label
    (where a branch may land), or an instruction of the current function."""
    functions: list[Function] = []
    for line in lines:
        name = function_name(line)
        if name:
            functions.append(Function(name))
            continue
        if not functions:
            continue
        fn = functions[-1]
        label = _LABEL.match(line)
        if label:
            fn.labels[label.group(1)] = len(fn.instructions)
            continue
        found = instruction(fn, line)
        if found:
            fn.instructions.append(found)
    return functions


def parse_sass(text: str) -> list[Function]:
    """nvdisasm's or cuobjdump's listing -> functions. Branch targets are labels
    (nvdisasm: ``BRA `(.L_x_3)``) or addresses (cuobjdump: ``BRA 0x3290``)."""
    def function_name(line):
        start = next((m for m in (p.match(line) for p in _SASS_FUNCTION) if m), None)
        return start and start.group(1)

    def instruction(fn, line):
        match = _SASS_INSTRUCTION.match(line)
        if not match:
            return None
        address, opcode, operands = match.groups()
        fn.labels[f"0x{int(address, 16):x}"] = len(fn.instructions)  # cuobjdump branches to addresses
        target = None
        if opcode.split(".")[0] == "BRA":
            found = re.search(r"`\(([^)]+)\)|(0x[0-9a-f]+)", operands)
            if found:
                target = found.group(1) or f"0x{int(found.group(2), 16):x}"
        return Instruction(opcode, target)
    return _parse(text.splitlines(), function_name, instruction)


def parse_ptx(text: str) -> list[Function]:
    def function_name(line):
        start = _PTX_FUNCTION.search(line)
        return start and start.group(1)

    def instruction(fn, line):
        match = _PTX_INSTRUCTION.match(line)
        if not match:
            return None
        opcode, operands = match.groups()
        return Instruction(opcode, operands.strip().rstrip(",") if opcode.split(".")[0] == "bra" else None)
    return _parse((line.split("//")[0] for line in text.splitlines()), function_name, instruction)


def parse_listing(listing: Listing) -> list[Function]:
    return parse_ptx(listing.text) if listing.kind == "ptx" else parse_sass(listing.text)


# The instructions that do a GEMM's arithmetic, by their first word: tensor-core
# ones, and scalar FMAs (which a tensor-core kernel also uses in its epilogue).
_TENSOR_MATH = {"HMMA", "HGMMA", "IMMA", "mma", "wgmma"}
_SCALAR_MATH = {"FFMA", "DFMA", "fma"}


def is_math(opcode: str) -> bool:
    return opcode.split(".")[0] in _TENSOR_MATH | _SCALAR_MATH


@dataclass(frozen=True)
class Loop:
    start: int  # index of the first instruction of the body
    end: int  # index of the backward branch (inclusive)

    @property
    def length(self) -> int:
        return self.end - self.start + 1


def loops(fn: Function) -> list[Loop]:
    """Every backward branch's body, in program order of the branch."""
    found = []
    for index, instruction in enumerate(fn.instructions):
        target = fn.labels.get(instruction.target) if instruction.target else None
        if target is not None and target <= index:
            found.append(Loop(target, index))
    return found


def main_loop(fn: Function) -> Loop | None:
    """The innermost loop body with tensor-core instructions (the most of
    them), else the one with the most scalar FMAs (so a tensor-core kernel's
    epilogue loop never wins); the shortest among equals. None when no loop
    holds any math."""
    def rank(loop: Loop) -> tuple[int, int, int]:
        words = [i.opcode.split(".")[0] for i in fn.instructions[loop.start:loop.end + 1]]
        return (sum(w in _TENSOR_MATH for w in words), sum(w in _SCALAR_MATH for w in words), -loop.length)

    def structured(loop: Loop) -> bool:
        """ptxas puts the retry of an mbarrier wait after the kernel's EXIT and
        branches back from there: that span holds the exit and is no loop body."""
        return not any(i.opcode.split(".")[0] == "EXIT" for i in fn.instructions[loop.start:loop.end + 1])
    ranked = [(rank(loop), loop) for loop in loops(fn) if structured(loop)]
    ranked = [(r, loop) for r, loop in ranked if r[0] or r[1]]
    tensor = [loop for r, loop in ranked if r[0]]
    # a persistent kernel's tile loop holds the K loop's tensor math and its own
    # prologue and drain: the K loop is the innermost loop with tensor math
    ranked = [(r, loop) for r, loop in ranked
              if not (r[0] and any(inner is not loop and loop.start <= inner.start and inner.end <= loop.end
                                   for inner in tensor))]
    return max(ranked, key=lambda item: item[0])[1] if ranked else None


def mix_key(opcode: str) -> str:
    """The instruction's family for the mix: SASS keeps the first word and an
    access width (LDS.U.128 -> LDS.128, LDG.E.128.CONSTANT -> LDG.128, BAR.SYNC ->
    BAR); PTX keeps the whole opcode (ld.shared.v4.f32), which already says it."""
    if opcode[:1].islower():
        return opcode
    words = opcode.split(".")
    width = next((w for w in words[1:] if w in ("64", "128")), None)
    return f"{words[0]}.{width}" if width else words[0]


@dataclass(frozen=True)
class LoopMix:
    """The instruction mix of one function's main loop."""

    function: str
    loop: Loop | None
    mix: Counter  # mix_key -> count in the loop body (the whole function when no loop has math)
    total_instructions: int  # in the whole function

    def count(self, key: str) -> int:
        return self.mix.get(key, 0)


def loop_mix(fn: Function) -> LoopMix:
    loop = main_loop(fn)
    body = fn.instructions[loop.start:loop.end + 1] if loop else fn.instructions
    return LoopMix(fn.name, loop, Counter(mix_key(i.opcode) for i in body), len(fn.instructions))


def main_function(functions: list[Function], entry: str = "sgemm") -> Function:
    """The GEMM kernel of a listing (split-K and 3xTF32 builds hold helpers too)."""
    for fn in functions:
        if fn.name == entry:
            return fn
    if not functions:
        raise ValueError("no function found in the listing")
    return max(functions, key=lambda f: len(f.instructions))
