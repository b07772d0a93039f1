"""Properties of rungs 30-33's schedule choice (gemmbench/rungs/half.py), over generated shapes and GPUs:

- the choice passes the rung's own check (shared memory, registers, tile and cluster rules) at any M, N, K and
  SM count, so no shape a user brings gets a schedule the kernel cannot build;
- a K split in a cluster is a grid that is not persistent, a cluster a tile of 128 columns; in clusters of 3 or
  4 it is one wave of 64 x 128 tiles: its blocks fit the SMs and its clusters the share of them that fit at
  once (_CLUSTER_SPLIT_FIT);
- a split through partials never has clusters, and the grid is what the rung launches for either split.
"""

from __future__ import annotations

import pytest

from gemmbench.rungs import get_spec
from gemmbench.rungs.half import _CLUSTER_SPLIT_FIT, split_in_cluster, split_through_partials
from gemmbench.spec import ceil_div

pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

DIMS = st.one_of(st.integers(1, 300), st.integers(1, 20000), st.sampled_from([16, 64, 100, 128, 1024, 4096, 14336]))
# and where the splits in clusters live: a few rows against a layer of a few thousand, K of a few thousand
SHAPES = st.one_of(st.tuples(DIMS, DIMS, st.one_of(DIMS, st.integers(1, 200000))),
                   st.tuples(st.integers(1, 300), st.integers(1000, 6200), st.integers(1000, 16384)))
SMS = st.sampled_from([132, 114, 78, 16, 1])


@settings(deadline=None, database=None, max_examples=400)
@given(shape=SHAPES, sms=SMS, rung=st.sampled_from([30, 31, 32, 33]))
def test_the_few_tile_schedule_is_one_the_rung_accepts(shape, sms, rung):
    M, N, K = shape
    spec = get_spec("gpu", rung)
    p = spec.params_for(M, N, K, sms)
    assert spec.invalid_reason(p) is None, p
    tiles = ceil_div(M, p["BM"]) * ceil_div(N, p["BN"])
    if split_in_cluster(p):
        ways = p["KSPLIT"]
        assert (p["BN"], p["PERSISTENT"]) == (128, 0) and ways in (2, 3, 4)
        assert spec.grid(M, N, K, p)[0] == ways * tiles
        if ways > 2:  # (pairs: 128 x 128 tiles too)
            assert p["BM"] == 64 and ways * tiles <= sms and tiles <= int(sms * _CLUSTER_SPLIT_FIT[ways])
    elif p["KSPLIT"] > 1:
        assert split_through_partials(p) and p["CLUSTER"] == 1
