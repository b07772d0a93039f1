"""TMA tensor maps on the launch path.

A rung that loads tiles with the Tensor Memory Accelerator takes each operand
as a ``const __grid_constant__`` tensor map: a 128-byte, 64-byte-aligned
``CUtensorMap`` that the host encodes with the driver's
``cuTensorMapEncodeTiled`` and passes *by value* among the kernel's
parameters. pycuda packs arguments back to back, but the kernel reads each
parameter at the offset nvcc gave it (a map is aligned to 64 bytes of the
parameter *bank*, which does not start at a 64-byte boundary, so the offsets
are not those of a C struct). So the whole parameter block is packed here at
the offsets the driver reports for the compiled kernel
(``cuFuncGetParamInfo``) and launched as one opaque argument.

Three steps, each usable on its own:

- ``matrix_map``: what to encode for a tile of a row-major matrix,
  with the reason TMA cannot take it (``unsupported_reason``);
- ``encode``: the 128 bytes of the map, by the driver (needs libcuda);
- ``param_layout`` (driver, needs a CUDA context) and ``pack_params`` (pure).
"""

from __future__ import annotations

import contextlib
import ctypes
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

MAP_BYTES = 128  # sizeof(CUtensorMap)
_HOST_ALIGN = 128  # CUDA 13 asks for 128-byte alignment of the host copy; 64 suffices for older drivers

# cuda.h enumerators used here
_DATA_TYPE = {"fp32": 7, "fp16": 6, "bf16": 9}  # CU_TENSOR_MAP_DATA_TYPE_FLOAT32, _FLOAT16, _BFLOAT16
_ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes -> CU_TENSOR_MAP_SWIZZLE_*
_INTERLEAVE_NONE = 0
_L2_PROMOTION_128B = 2
_OOB_FILL_ZERO = 0  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: elements outside the matrix read as zero


class TensorMapError(Exception):
    """The driver refused to encode a map, or to report a kernel's parameters."""


@dataclass(frozen=True)
class MatrixMap:
    """A 2-D tiled map over a row-major matrix of ``rows`` x ``cols``
    ``element`` values whose rows start ``pitch`` elements apart, loaded in boxes of
    ``box_rows`` x ``box_cols``, laid out in shared memory with a
    ``swizzle``-byte swizzle (0, 32, 64 or 128). In the driver's terms the
    innermost dimension comes first: dims (cols, rows), one byte stride
    (pitch * element bytes), box (box_cols, box_rows), element strides (1, 1).

    With ``box_chunks`` > 1 one load takes that many neighbouring boxes along
    the row, landing one after another in shared memory: a swizzle span
    limits a box row to 128 bytes, so the map views the matrix in 3-D as
    column chunks of ``box_cols`` (dims (box_cols, rows, cols / box_cols),
    byte strides (pitch, box_cols) * element bytes, box (box_cols, box_rows,
    box_chunks)). The chunks must tile the row exactly: past ``cols`` a 3-D
    box would read the next row instead of zeros."""

    rows: int
    cols: int
    pitch: int
    box_rows: int
    box_cols: int
    swizzle: int = 128
    element: str = "fp32"  # fp32, fp16 or bf16
    box_chunks: int = 1

    @property
    def element_bytes(self) -> int:
        return _ELEMENT_BYTES.get(self.element, 0)

    @property
    def global_dims(self) -> tuple[int, ...]:
        if self.box_chunks > 1:
            return self.box_cols, self.rows, self.cols // self.box_cols
        return self.cols, self.rows

    @property
    def global_strides(self) -> tuple[int, ...]:
        row = self.pitch * self.element_bytes
        return (row, self.box_cols * self.element_bytes) if self.box_chunks > 1 else (row,)

    @property
    def box(self) -> tuple[int, ...]:
        return (self.box_cols, self.box_rows) + ((self.box_chunks,) if self.box_chunks > 1 else ())

    def unsupported_reason(self) -> str | None:
        """Why cuTensorMapEncodeTiled would refuse this map, in words; None if it is valid."""
        if self.element not in _DATA_TYPE:
            return f"element type {self.element!r} is not supported (fp32, fp16, bf16)"
        row_bytes = self.pitch * self.element_bytes
        inner_box_bytes = self.box_cols * self.element_bytes
        if self.rows < 1 or self.cols < 1:
            return f"a {self.rows} x {self.cols} matrix is empty"
        if self.pitch < self.cols:
            return f"row pitch {self.pitch} is shorter than a row of {self.cols}"
        if row_bytes % 16:
            return (f"a row pitch of {self.pitch} floats ({row_bytes} bytes) is not a multiple of 16 bytes, "
                    f"which TMA requires")
        if row_bytes >= 2**40 or max(self.global_dims) > 2**32:
            return "the matrix exceeds TMA's 2^32 elements per dimension or 2^40-byte strides"
        if not (1 <= self.box_rows <= 256 and 1 <= self.box_cols <= 256):
            return f"box {self.box_rows} x {self.box_cols}: TMA boxes are 1..256 per dimension"
        if inner_box_bytes % 16:
            return f"a box row of {inner_box_bytes} bytes is not a multiple of 16"
        if self.swizzle not in _SWIZZLE:
            return f"swizzle {self.swizzle}: must be 0, 32, 64 or 128 bytes"
        if self.swizzle and inner_box_bytes > self.swizzle:
            return f"a box row of {inner_box_bytes} bytes exceeds the {self.swizzle}-byte swizzle span"
        if not 1 <= self.box_chunks <= 256:
            return f"{self.box_chunks} chunks a box: TMA boxes are 1..256 per dimension"
        if self.box_chunks > 1 and self.cols % self.box_cols:
            return (f"a load of {self.box_chunks} chunks of {self.box_cols} columns needs the {self.cols} columns "
                    f"to be a multiple of {self.box_cols}")
        return None


def matrix_map(rows: int, cols: int, box_rows: int, box_cols: int, swizzle: int = 128,
               pitch: int | None = None, element: str = "fp32", box_chunks: int = 1) -> MatrixMap:
    """The map of a row-major matrix of ``element`` values (pitch defaults to cols)."""
    return MatrixMap(rows, cols, cols if pitch is None else pitch, box_rows, box_cols, swizzle, element, box_chunks)


def pitch_for_tma(cols: int, element_bytes: int = 4) -> int:
    """The smallest row pitch >= cols (in elements) that TMA accepts: rows 16-byte aligned."""
    per16 = 16 // element_bytes
    return -(-cols // per16) * per16


@lru_cache(maxsize=1)
def _libcuda():
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise TensorMapError(f"cannot load the CUDA driver library libcuda.so.1: {exc}") from None
    lib.cuTensorMapEncodeTiled.restype = ctypes.c_int
    lib.cuTensorMapEncodeTiled.argtypes = [
        ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
        ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
        ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return lib


def _error_name(lib, code: int) -> str:
    name = ctypes.c_char_p()
    if lib.cuGetErrorName(ctypes.c_int(code), ctypes.byref(name)) == 0 and name.value:
        return name.value.decode()
    return f"CUresult {code}"


def encode(m: MatrixMap, address: int) -> bytes:
    """The CUtensorMap of ``m`` over the device matrix at ``address``, as the
    128 bytes a kernel parameter holds. Raises TensorMapError with the reason."""
    reason = m.unsupported_reason()
    if reason:
        raise TensorMapError(reason)
    if address % 16:
        raise TensorMapError(f"device address {address:#x} is not 16-byte aligned, which TMA requires")
    lib = _libcuda()
    # ctypes arrays are only 8-byte aligned; the driver writes the map into an aligned spot inside this one.
    raw = (ctypes.c_ubyte * (MAP_BYTES + _HOST_ALIGN))()
    spot = -ctypes.addressof(raw) % _HOST_ALIGN
    rank = len(m.global_dims)
    dims = (ctypes.c_uint64 * rank)(*m.global_dims)
    strides = (ctypes.c_uint64 * (rank - 1))(*m.global_strides)
    box = (ctypes.c_uint32 * rank)(*m.box)
    element_strides = (ctypes.c_uint32 * rank)(*(1,) * rank)
    code = lib.cuTensorMapEncodeTiled(
        ctypes.addressof(raw) + spot, _DATA_TYPE[m.element], rank, ctypes.c_void_p(address), dims, strides, box,
        element_strides, _INTERLEAVE_NONE, _SWIZZLE[m.swizzle], _L2_PROMOTION_128B, _OOB_FILL_ZERO)
    if code != 0:
        raise TensorMapError(f"cuTensorMapEncodeTiled refused {m}: {_error_name(lib, code)}")
    return bytes(raw[spot:spot + MAP_BYTES])


# --- the parameter block -----------------------------------------------------

@dataclass(frozen=True)
class ParamLayout:
    """Where each kernel parameter sits in the parameter block: (offset, size) in bytes."""

    slots: tuple[tuple[int, int], ...]

    @property
    def size(self) -> int:
        return max((offset + size for offset, size in self.slots), default=0)


# pack_params formats: a tensor map (128 bytes, given as bytes) or a struct code
_SIZES = {"T": MAP_BYTES, "i": 4, "f": 4, "P": 8, "q": 8}


def pack_params(layout: ParamLayout, formats: str, values: Sequence) -> bytearray:
    """The parameter block: each value at its offset, zero padding between.

    ``formats`` has one letter per parameter: T (a tensor map's 128 bytes),
    i (int), f (float), P (device pointer), q (int64). A kernel whose
    parameters differ in count or size from ``formats`` is a ValueError: the
    driver and the kernel would disagree about every value after it."""
    if len(formats) != len(layout.slots) or len(values) != len(formats):
        raise ValueError(f"the kernel has {len(layout.slots)} parameters; {len(formats)} formats and "
                         f"{len(values)} values were given")
    block = bytearray(layout.size)
    for i, (fmt, value, (offset, size)) in enumerate(zip(formats, values, layout.slots)):
        if fmt not in _SIZES:
            raise ValueError(f"unknown parameter format {fmt!r}")
        if _SIZES[fmt] != size:
            raise ValueError(f"parameter {i} is {size} bytes in the kernel, {_SIZES[fmt]} as {fmt!r}")
        if fmt == "T":
            if len(value) != MAP_BYTES:
                raise ValueError(f"parameter {i}: a tensor map is {MAP_BYTES} bytes, got {len(value)}")
            block[offset:offset + size] = value
        else:
            struct.pack_into("<" + ("Q" if fmt == "P" else fmt), block, offset, int(value) if fmt in "iPq" else value)
    return block


def set_scalar(block: bytearray, layout: ParamLayout, index: int, fmt: str, value) -> None:
    """Rewrite one scalar of a packed block in place (alpha and beta change per call)."""
    struct.pack_into("<" + fmt, block, layout.slots[index][0], value)


def param_layout(cubin: bytes, entry: str, count: int) -> ParamLayout:
    """The offsets and sizes of ``entry``'s ``count`` parameters, as the
    driver reports them for this cubin (cuFuncGetParamInfo, CUDA 12.4+).
    Needs a current CUDA context; loads the cubin into a module of its own
    for the query. Where the driver can count the parameters
    (cuFuncGetParamCount), a kernel with another number is refused."""
    lib = _libcuda()
    get_info = getattr(lib, "cuFuncGetParamInfo", None)
    if get_info is None:
        raise TensorMapError("the CUDA driver lacks cuFuncGetParamInfo (needs a CUDA 12.4 or newer driver)")
    with loaded_function(lib, cubin, entry) as function:
        get_count, n = getattr(lib, "cuFuncGetParamCount", None), ctypes.c_size_t()
        if get_count is not None and get_count(function, ctypes.byref(n)) == 0 and n.value != count:
            raise TensorMapError(f"{entry} has {n.value} parameters; the driver passes {count}")
        slots = []
        offset, size = ctypes.c_size_t(), ctypes.c_size_t()
        for index in range(count):
            code = get_info(function, ctypes.c_size_t(index), ctypes.byref(offset), ctypes.byref(size))
            if code != 0:
                raise TensorMapError(f"cuFuncGetParamInfo({entry}, {index}): {_error_name(lib, code)}")
            slots.append((offset.value, size.value))
        return ParamLayout(tuple(slots))


@contextlib.contextmanager
def loaded_function(lib, cubin: bytes, entry: str):
    """``entry`` of ``cubin`` in a module of its own, for a driver query
    (needs a current CUDA context); the module is unloaded afterwards."""
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    code = lib.cuModuleLoadData(ctypes.byref(module), ctypes.create_string_buffer(cubin))
    if code != 0:
        raise TensorMapError(f"cuModuleLoadData: {_error_name(lib, code)}")
    try:
        code = lib.cuModuleGetFunction(ctypes.byref(function), module, entry.encode())
        if code != 0:
            raise TensorMapError(f"cuModuleGetFunction({entry}): {_error_name(lib, code)}")
        yield function
    finally:
        lib.cuModuleUnload(module)
