"""The instruments on a real GPU (skipped without one): the ctypes route to the
driver reads the same attributes pycuda reports for the kernel that runs, and
the commands print their tables."""

import json

import pytest

from gemmbench import cli
from gemmbench.backend import Shape
from gemmbench.rungs import GPU_LADDER, get_spec

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("kernel_id", [1, 9, 12, 14])
def test_driver_attributes_match_pycuda(kernel_id):
    from gemmbench.gpu.compile import load_module
    from gemmbench.inspect.gpu import inspect_occupancy, load_shape, open_backend
    backend = open_backend("info")
    shape = Shape(256, 192, 128)
    load_shape(backend, shape)
    [row] = inspect_occupancy(backend, [get_spec("gpu", kernel_id)], shape)
    prepared = backend.prepare(get_spec("gpu", kernel_id), shape)
    function = load_module(prepared.spec, backend.info.compute_capability, prepared.params).get_function("sgemm")
    assert row.resources.registers == function.num_regs
    assert row.resources.static_shared == function.shared_size_bytes
    assert row.resources.local_bytes == function.local_size_bytes
    assert row.blocks_per_sm >= 1 and row.binding != ["driver"]
    assert 0 < row.theoretical_occupancy <= 1


def test_info_json_lists_every_rung(capsys):
    code = cli.main(["info", "-m", "300", "-n", "200", "-k", "100", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    ids = [k["kernel_id"] for k in out["kernels"]]
    assert ids == sorted(ids) and set(ids) == {s.id for s in GPU_LADDER}
    assert all("not_inspected" in k for k in out["kernels"] if k["kernel_id"] == 0)
    assert all(k["blocks_per_sm"] >= 1 for k in out["kernels"] if k["kernel_id"] != 0)
