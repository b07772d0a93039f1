"""The few CUDA driver calls pycuda does not offer, through ctypes on libcuda.

pycuda hides a Function's CUfunction handle, and the driver's occupancy
calculator needs it. So the very cubin pycuda loads (from the same compile
cache) is loaded a second time here, into the same (current) context, and
asked for its attributes and its occupancy.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

# CUfunction_attribute
FUNC_SHARED_SIZE_BYTES = 1
FUNC_LOCAL_SIZE_BYTES = 3
FUNC_NUM_REGS = 4
FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

# CUdevice_attribute
DEV_WARP_SIZE = 10
DEV_MULTIPROCESSOR_COUNT = 16
DEV_MAX_THREADS_PER_MULTIPROCESSOR = 39
DEV_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
DEV_MAX_REGISTERS_PER_MULTIPROCESSOR = 82
DEV_MAX_BLOCKS_PER_MULTIPROCESSOR = 106
DEV_RESERVED_SHARED_MEMORY_PER_BLOCK = 111


class DriverError(Exception):
    """A driver call failed; the message names the call and the driver's reason."""


@lru_cache(maxsize=None)
def _libcuda():
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise DriverError(f"libcuda.so.1 not loadable: {exc}") from None


def _check(result: int, call: str) -> None:
    if result != 0:
        text = ctypes.c_char_p()
        _libcuda().cuGetErrorString(result, ctypes.byref(text))
        raise DriverError(f"{call}: {text.value.decode() if text.value else f'CUDA error {result}'}")


def device_attribute(attribute: int) -> int:
    """An attribute of the current context's device."""
    cuda = _libcuda()
    device, value = ctypes.c_int(), ctypes.c_int()
    _check(cuda.cuCtxGetDevice(ctypes.byref(device)), "cuCtxGetDevice")
    _check(cuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, device), "cuDeviceGetAttribute")
    return value.value


class LoadedFunction:
    """One kernel of a cubin, loaded into the current context."""

    def __init__(self, cubin: bytes, name: str):
        cuda = _libcuda()
        self._image = ctypes.create_string_buffer(cubin, len(cubin))
        self._module = ctypes.c_void_p()
        _check(cuda.cuModuleLoadData(ctypes.byref(self._module), self._image), "cuModuleLoadData")
        self.handle = ctypes.c_void_p()
        _check(cuda.cuModuleGetFunction(ctypes.byref(self.handle), self._module, name.encode()),
               f"cuModuleGetFunction({name})")

    def attribute(self, attribute: int) -> int:
        value = ctypes.c_int()
        _check(_libcuda().cuFuncGetAttribute(ctypes.byref(value), attribute, self.handle), "cuFuncGetAttribute")
        return value.value

    def allow_dynamic_shared(self, nbytes: int) -> None:
        """Opt in to more than 48 KiB of dynamic shared memory, as the launch does."""
        _check(_libcuda().cuFuncSetAttribute(self.handle, FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes),
               "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")

    def max_active_blocks(self, threads: int, dynamic_shared: int) -> int:
        """cuOccupancyMaxActiveBlocksPerMultiprocessor: resident blocks per SM."""
        blocks = ctypes.c_int()
        _check(_libcuda().cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(blocks), self.handle, ctypes.c_int(threads), ctypes.c_size_t(dynamic_shared)),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        return blocks.value

    def close(self) -> None:
        if self._module:
            _libcuda().cuModuleUnload(self._module)
            self._module = ctypes.c_void_p()
