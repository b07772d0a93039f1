"""How many thread-block clusters of a kernel the GPU runs at once.

A persistent rung launches one block per SM and lets each walk many tiles.
With clusters that is only right if every cluster of the grid is resident
at once: the GPU places a cluster inside one GPC, and where a GPC's free
SMs do not divide by the cluster size some SMs stay idle, so fewer clusters
than SMs / size fit. A grid with more clusters than fit runs the rest as a
second wave, each of them doing a full share of the tiles (twice the time).
The driver's cuOccupancyMaxActiveClusters says how many fit; the persistent
grid is capped there.
"""

from __future__ import annotations

import ctypes

from .tensormap import TensorMapError, _error_name, _libcuda, loaded_function

_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8  # CUfunction_attribute


class _LaunchConfig(ctypes.Structure):
    """cuda.h's CUlaunchConfig."""
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p), ("attrs", ctypes.c_void_p),
                ("numAttrs", ctypes.c_uint)]


def max_active_clusters(cubin: bytes, entry: str, cluster: int, threads: int, shared_bytes: int) -> int:
    """Clusters of ``entry`` (its cluster size ``cluster`` set by __cluster_dims__) that can be
    resident together with blocks of ``threads`` threads and ``shared_bytes`` of dynamic shared
    memory. Needs a current CUDA context; loads the cubin into a module of its own for the query."""
    lib = _libcuda()
    query = getattr(lib, "cuOccupancyMaxActiveClusters", None)
    if query is None:
        raise TensorMapError("the CUDA driver lacks cuOccupancyMaxActiveClusters (needs CUDA 12)")
    with loaded_function(lib, cubin, entry) as function:
        code = lib.cuFuncSetAttribute(function, _MAX_DYNAMIC_SHARED_SIZE_BYTES, ctypes.c_int(shared_bytes))
        count = ctypes.c_int()
        if code == 0:
            config = _LaunchConfig(cluster, 1, 1, threads, 1, 1, shared_bytes, None, None, 0)
            code = query(ctypes.byref(count), function, ctypes.byref(config))
        if code != 0:
            raise TensorMapError(f"cuOccupancyMaxActiveClusters({entry}): {_error_name(lib, code)}")
        return count.value
