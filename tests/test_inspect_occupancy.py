"""Occupancy arithmetic with made-up and recorded attributes (no GPU)."""

import json
from pathlib import Path

import pytest

from gemmbench.inspect.occupancy import (LIMIT_NAMES, Occupancy, Resources, SmLimits, binding_limits,
                                         limits_per_resource)

H200 = SmLimits(sm_count=132)  # the H200's figures (cuDeviceGetAttribute), as the defaults
DATA = Path(__file__).parent / "data"


def limits(registers, threads, static=0, dynamic=0):
    return limits_per_resource(Resources(registers, 0, static, dynamic, threads), H200)


def test_each_resource_alone():
    # 32 registers x 1024 threads: two blocks fill both the register file and the 64 warp slots
    assert limits(32, 1024) == {"registers": 2, "shared memory": 228, "threads": 2, "block slots": 32}
    # registers are allocated per warp in units of 256, per quarter of the register file:
    # 39 -> 40 per thread, 1280 per warp, 12 warps per quarter, 48 warps = 3 blocks of 16 warps
    assert limits(39, 512, static=4096)["registers"] == 3
    # shared memory: the block's bytes plus the driver's 1 KiB, in 128-byte units
    assert limits(255, 256, dynamic=144 * 1024)["shared memory"] == 1
    assert limits(16, 64, static=10_000)["shared memory"] == 233472 // (10_112 + 1024)
    # tiny blocks: the 32 block slots bind
    assert limits(16, 32)["block slots"] == 32 and limits(16, 32)["threads"] == 64


def test_binding_is_every_resource_at_the_drivers_number():
    lim = {"registers": 1, "shared memory": 1, "threads": 8, "block slots": 32}
    assert binding_limits(lim, 1) == ["registers", "shared memory"]
    assert binding_limits({**lim, "registers": 2}, 1) == ["shared memory"]
    assert binding_limits(lim, 0) == ["driver"]  # below every modelled limit: said so, not guessed


def test_the_model_agrees_with_the_h200_driver_for_every_rung():
    """info --json from the H200 (4096^3): per-resource limits from the recorded
    attributes give the driver's own blocks per SM for all 15 rungs."""
    record = json.loads((DATA / "info_4096_h200.json").read_text())
    rows = [k for k in record["kernels"] if "not_inspected" not in k]
    assert len(rows) == 15
    for row in rows:
        r = row["resources"]
        lim = limits_per_resource(Resources(r["registers"], r["local_bytes"], r["static_shared"],
                                            r["dynamic_shared"], r["threads"]), H200)
        assert min(lim.values()) == row["blocks_per_sm"], row["name"]
        assert binding_limits(lim, row["blocks_per_sm"]) == row["binding"]


def occupancy(blocks_per_sm, grid, threads=256):
    res = Resources(128, 0, 0, 0, threads)
    lim = limits_per_resource(res, H200)
    return Occupancy(12, "x", "sgemm", "", {}, "default", res, (threads, 1, 1), grid, blocks_per_sm, lim,
                     binding_limits(lim, blocks_per_sm), H200)


def test_waves_and_tail():
    o = occupancy(2, (32, 32, 1))  # 1024 blocks over 264 slots
    assert o.theoretical_occupancy == pytest.approx(16 / 64)
    assert o.waves == pytest.approx(1024 / 264)
    assert o.tail_share == pytest.approx((1024 - 3 * 264) / 264)
    assert occupancy(1, (132, 2, 1)).tail_share == 1.0  # whole waves
    assert occupancy(0, (4, 1, 1)).waves == float("inf")
    d = occupancy(2, (8, 8, 2)).to_dict()
    assert d["grid_blocks"] == 128 and set(d["limits"]) == set(LIMIT_NAMES)
