"""GPU tests: every rung against the FP64 reference, the timer, the cache.

Marked ``gpu``: they skip cleanly where pycuda or a CUDA device is missing.
"""

import numpy as np
import pytest

from gemmbench import cli
from gemmbench.backend import Budget, Problem, Shape
from gemmbench.execute.local import expectations, verify_kernel
from gemmbench.precision import precision
from gemmbench.rungs import GPU_LADDER, baselines, get_spec
from gemmbench.verify import tolerance

pytestmark = pytest.mark.gpu

SHAPES = [Shape(1, 1, 1), Shape(7, 13, 5), Shape(17, 33, 65), Shape(127, 255, 511), Shape(1000, 1000, 1000),
          Shape(513, 1025, 257), Shape(4096, 4096, 4096), Shape(3, 4099, 2), Shape(4099, 3, 37)]


@pytest.fixture(scope="module", params=SHAPES, ids=str)
def loaded(request, gpu, load_problem):
    return load_problem(gpu, request.param, seed=11)


FP32_INPUTS = [s for s in GPU_LADDER if precision(s.precision).inputs == "fp32"]  # 16-bit rows: test_half_gpu.py


@pytest.mark.parametrize("spec", FP32_INPUTS, ids=lambda s: f"rung{s.id}")
def test_rung_matches_fp64_reference(gpu, loaded, spec):
    problem, passes = loaded
    v = verify_kernel(gpu, gpu.prepare(spec, problem.shape).gemm, passes, spec.precision)
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"


# Tile geometries of copy4.cuh's 4-byte copies (the cp.async loops' path for rows that are not 16-byte
# aligned) beyond the rungs' defaults: a tile row wider than the block (256 columns, 128 threads: two
# copies a row), A rows whose swizzle changes between a thread's rows (BK = 32, 128 threads: rows 4 apart).
COPY4_TILES = [(12, dict(BM=64, BN=256, BK=8, TM=8, TN=16, NUM_THREADS=128, STAGES=3, MIN_BLOCKS=1)),
               (12, dict(BM=64, BN=64, BK=32, TM=4, TN=8, NUM_THREADS=128, STAGES=3, MIN_BLOCKS=2)),
               (19, dict(BM=64, BN=256, BK=8, TM=8, TN=16, NUM_THREADS=128, STAGES=3, MIN_BLOCKS=1))]


@pytest.mark.parametrize("rung, params", COPY4_TILES, ids=lambda x: str(x) if isinstance(x, int) else
                         f"{x['BM']}x{x['BN']}x{x['BK']}")
def test_unaligned_rows_are_copied_right_at_every_tile_geometry(gpu, loaded, rung, params):
    problem, passes = loaded
    v = verify_kernel(gpu, gpu.prepare(get_spec("gpu", rung), problem.shape, params).gemm, passes, "fp32")
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"


@pytest.mark.parametrize("splits", [3, 40])
@pytest.mark.parametrize("rung", [17])
def test_split_k_of_the_tma_rungs_matches_fp64_reference(gpu, loaded, rung, splits):
    """Rung 17 with K split (units of tile x split on the persistent grid, then reduce_splits), at
    every shape of the module, where the partials fit in 256 MiB; 40 splits leave some empty at small K."""
    problem, passes = loaded
    shape = problem.shape
    if shape.M * shape.N * splits > 1 << 26:
        pytest.skip("partials over 256 MiB")
    spec = get_spec("gpu", rung)
    params = {**spec.params_for(shape.M, shape.N, shape.K, gpu.info.sm_count), "SPLITS": splits}
    v = verify_kernel(gpu, gpu.prepare(spec, shape, params).gemm, passes, spec.precision)
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"


@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("tile", [dict(BM=192, BN=128, STAGES=4), dict(BM=128, BN=128, STAGES=6)],
                         ids=lambda t: f"{t['BM']}x{t['BN']}-on-{t['STAGES']}")
def test_rung_17s_192_row_tiles_and_6_slot_ring_match_fp64_reference(gpu, loaded, tile, splits):
    """The tiles a shape-set tune of rung 17 tries beyond its rule's: 192 rows (wgmma n192), and 128 x 128
    on 6 slots, at every shape of the module, whole and in 3 K splits."""
    problem, passes = loaded
    shape, spec = problem.shape, get_spec("gpu", 17)
    params = {**spec.params_for(shape.M, shape.N, shape.K, gpu.info.sm_count), **tile, "SPLITS": splits}
    params.pop("GEMV", None), params.pop("SMALL", None)  # the tiled kernel, even where a one-launch path runs
    v = verify_kernel(gpu, gpu.prepare(spec, shape, params).gemm, passes, spec.precision)
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"


@pytest.mark.parametrize("spec", [s.fallback for s in FP32_INPUTS if s.fallback], ids=lambda s: f"rung{s.id}-fallback")
def test_mma_sync_fallback_matches_fp64_reference(gpu, loaded, spec):
    """The path GPUs without wgmma take (built here for plain sm_90), through the tool's own driver."""
    problem, passes = loaded
    v = verify_kernel(gpu, gpu.prepare(spec, problem.shape).gemm, passes, spec.precision)
    assert v.nonfinite == 0, f"{v.nonfinite} non-finite or unwritten elements"
    assert v.passed, f"max rel error {v.max_rel_error:.2e} > {v.tolerance:.2e}"


def test_reference_agrees_with_numpy(gpu):
    problem = Problem.random(Shape(65, 33, 129), seed=2)
    gpu.load(problem)
    ref, absref = gpu.reference(problem)
    a, b = problem.A.astype(np.float64), problem.B.astype(np.float64)
    np.testing.assert_allclose(ref, a @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(absref, np.abs(a) @ np.abs(b), rtol=1e-12)


def test_timer_returns_raw_samples_within_budget(gpu):
    problem = Problem.random(Shape(256, 256, 256), seed=0)
    gpu.load(problem)
    gemm = gpu.prepare(get_spec("gpu", 5), problem.shape).gemm
    samples, _ = gpu.measure(gemm, 1.0, 0.0, Budget(0.01, 5, 40, 0.01))
    assert 5 <= len(samples) <= 40 and all(s > 0 for s in samples)
    cold, notes = gpu.measure(gemm, 1.0, 0.0, Budget(0.01, 5, 5, 0.0), flush_l2=True)
    assert len(cold) == 5 and notes["calls_per_sample"] == 1


def test_second_load_compiles_nothing(gpu, monkeypatch):
    from gemmbench.gpu import compile as kernels
    spec = get_spec("gpu", 10)
    kernels.load_module(spec, gpu.info.compute_capability)  # compiled or cached
    kernels._load.cache_clear()

    def no_nvcc(*args, **kwargs):
        raise AssertionError(f"nvcc ran: {args}")
    monkeypatch.setattr(kernels.procs, "run", no_nvcc)
    assert kernels.load_module(spec, gpu.info.compute_capability) is not None


def test_shape_too_large_is_exit_2(capsys):
    code = cli.main(["run", "-i", "1", "--device", "gpu", "-m", "300000", "-n", "300000", "-k", "300000",
                     "--no-save"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "GiB" in err


def test_run_command_on_gpu(capsys, tmp_path):
    code = cli.main(["run", "-i", "10", "--device", "gpu", "-m", "257", "-n", "129", "-k", "65",
                     "--budget", "0.01", "--json", "--results-dir", str(tmp_path)])
    import json
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [r["kernel_id"] for r in data["results"]] == [0, 10]
    assert all(r["status"] == "pass" for r in data["results"])
    assert data["environment"]["gpu"]["sm_count"] > 0


def test_cublas_tf32_really_runs_in_tf32(gpu):
    """The math mode took effect: errors are TF32-sized, beyond the FP32 bound."""
    problem = Problem.random(Shape(512, 512, 64), seed=4)  # small K: TF32 error far above the FP32 bound
    gpu.load(problem)
    passes = expectations(problem, *gpu.reference(problem))
    fp32, tf32 = baselines("gpu")
    assert verify_kernel(gpu, gpu.prepare(fp32, problem.shape).gemm, passes, "fp32").passed
    v = verify_kernel(gpu, gpu.prepare(tf32, problem.shape).gemm, passes, "tf32")
    assert v.passed and v.max_rel_error > tolerance(64, "fp32")


def test_a_tune_resumed_from_a_shorter_ones_record_times_only_the_new_shape(capsys, tmp_path, monkeypatch):
    """tune --resume on the GPU: the record of a tune at one shape carries that shape into a tune of two; the
    second record holds its rows as they were, and the table both shapes' bests."""
    import json
    from gemmbench.records.store import load
    from gemmbench.rungs import choice_table
    monkeypatch.chdir(tmp_path)
    (tmp_path / "one.csv").write_text("M,N,K\n257,129,65\n")
    (tmp_path / "two.csv").write_text("M,N,K\n257,129,65\n64,1000,333\n")
    fast = ["-i", "17", "--limit", "2", "--budget", "0.01", "--no-tune-cache", "--results-dir", "res"]
    assert cli.main(["tune", "--shapes", "one.csv", *fast]) == 0
    (first,) = (tmp_path / "res").glob("tune-*.json")
    capsys.readouterr()
    assert cli.main(["tune", "--shapes", "two.csv", *fast, "--resume", str(first), "--table", "t.json"]) == 0
    err = capsys.readouterr().err
    assert "carried 3 rows at the 1 shapes it finished; running the other 1" in err
    (second,) = set((tmp_path / "res").glob("tune-*.json")) - {first}
    before, after = load(first).record, load(second).record
    assert after.complete and [r.to_dict() for r in after.results[:3]] == [r.to_dict() for r in before.results]
    assert {r.shape for r in after.results[3:]} == {Shape(64, 1000, 333)}
    assert all(r.status == "pass" for r in after.results)
    table = choice_table.read(tmp_path / "t.json")
    assert list(table.choices) == [Shape(257, 129, 65), Shape(64, 1000, 333)] and "--resume" not in table.command
    assert json.loads((tmp_path / "t.json").read_text())["rung"] == 17


def test_a_sweep_resumed_from_a_shorter_ones_record_times_only_the_new_shape(capsys, tmp_path, monkeypatch):
    """sizes --resume on the GPU: the rows each rung chose its parameters for at a shape (its choice table, its
    rule, its defaults) are the ones it would choose again, so the shape the first record finished carries."""
    from gemmbench.records.store import load
    monkeypatch.chdir(tmp_path)
    (tmp_path / "one.csv").write_text("M,N,K\n257,129,65\n")
    (tmp_path / "two.csv").write_text("M,N,K\n257,129,65\n64,1000,333\n")
    fast = ["-i", "12", "-i", "17", "-i", "28", "-i", "32", "--budget", "0.01", "--no-tune-cache", "--results-dir",
            "res"]
    assert cli.main(["sizes", "--shapes", "one.csv", *fast]) == 0
    (first,) = (tmp_path / "res").glob("sizes-*.json")
    capsys.readouterr()
    assert cli.main(["sizes", "--shapes", "two.csv", *fast, "--resume", str(first)]) == 0
    err = capsys.readouterr().err
    assert "carried 7 rows at the 1 shapes it finished; running the other 1" in err, err  # 3 cuBLAS rows, 4 rungs
    (second,) = set((tmp_path / "res").glob("sizes-*.json")) - {first}
    before, after = load(first).record, load(second).record
    assert after.complete and [r.to_dict() for r in after.results[:7]] == [r.to_dict() for r in before.results]
    assert {r.shape for r in after.results[7:]} == {Shape(64, 1000, 333)} and len(after.results) == 14
    assert all(r.status == "pass" for r in after.results)


def test_tune_stores_the_best_and_run_uses_it(capsys, tmp_path, monkeypatch):
    import json
    monkeypatch.setenv("GEMMBENCH_CACHE_DIR", str(tmp_path))
    small = ["-m", "256", "-n", "256", "-k", "256", "--budget", "0.01", "--no-save"]
    code = cli.main(["tune", "-i", "9", "--limit", "3", "--device", "gpu", *small])
    out = capsys.readouterr().out
    assert code == 0 and "candidates ran: 3 verified and timed" in out
    stored = json.loads((tmp_path / "tuning.json").read_text())["entries"]
    assert len(stored) == 1 and "rung 9" in next(iter(stored))
    code = cli.main(["run", "-i", "9", "--device", "gpu", *small, "--json"])
    (rung9,) = [r for r in json.loads(capsys.readouterr().out)["results"] if r["kernel_id"] == 9]
    assert code == 0 and rung9["params_source"] == "tuned" and rung9["params"] == next(iter(stored.values()))["params"]
    code = cli.main(["run", "-i", "9", "--device", "gpu", *small, "--json", "--no-tune-cache"])
    (rung9,) = [r for r in json.loads(capsys.readouterr().out)["results"] if r["kernel_id"] == 9]
    assert code == 0 and rung9["params_source"] == "default"
