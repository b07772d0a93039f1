"""RunOptions and build_plan: options are one checked value, a plan is plain
data that any process can receive, and the rows are what each command asks."""

import dataclasses
import pickle
from pathlib import Path

import pytest

from gemmbench.errors import UserError
from gemmbench import options as options_module
from gemmbench.options import DEFAULT_MIN_TIME, DEFAULT_NOISE_TIMEOUT, NOISE_MAX_SAMPLES, RunOptions
from gemmbench.validate import MAX_SAMPLES
from gemmbench.plan import Row, build_plan
from gemmbench.precision import comparison_precision
from gemmbench.rungs import ladder

EXAMPLE_C = str(Path(__file__).resolve().parent.parent / "examples" / "blocked_sgemm.c")


def gpu_plan(**given):
    """A plan on a stand-in GPU 0 of two (nothing of CUDA is touched)."""
    return build_plan(RunOptions(**given), probe=lambda ordinal: None, count=lambda: 2)


@pytest.mark.parametrize("field, value, fragment", [
    ("seed", -1, "--seed -1"), ("seed", 2 ** 32, "--seed"), ("m", 0, "-m 0"), ("k", 2 ** 31, "-k"),
    ("warmup", 61.0, "--warmup"), ("budget", float("nan"), "--budget nan"), ("budget", -0.5, "--budget"),
    ("min_samples", 0, "--min-samples"), ("threads", 10 ** 6, "--threads"), ("top", 0, "--top"),
    ("kernel_timeout", 0.0, "--kernel-timeout"), ("gpu", -1, "--gpu"), ("seed", "3", "not a number"),
    ("seed", True, "not a number"), ("fmt", "xml", "--format xml"), ("device", "tpu", "--device tpu"),
    ("precisions", ("fp64",), "--precision fp64"), ("command", "bench", "unknown command"),
    ("max_noise", 0.0, "--max-noise 0.0 is out of range"), ("max_noise", 101.0, "--max-noise"),
    ("max_noise", "0.5%", "--max-noise '0.5%': not a number"), ("min_time", -1.0, "--min-time"),
    ("noise_timeout", float("inf"), "--noise-timeout inf"),
])
def test_options_out_of_range_are_one_line_from_python_too(field, value, fragment):
    with pytest.raises(UserError, match=fragment.replace("+", r"\+")):
        RunOptions(**{field: value})


@pytest.mark.parametrize("given, fragment", [
    ({"as_json": True, "fmt": "csv"}, "--json and --format csv"),
    ({"min_samples": 9, "max_samples": 3}, "--min-samples 9 is larger"),
    ({"gpu": 0, "device": "cpu"}, "--gpu 0"),
    ({"gpu": 0, "gpus": "all"}, "either --gpu or --gpus"),
    ({"gpus": "all", "device": "cpu"}, "--gpus"),
    ({"all_rungs": True, "kernels": (3,)}, "either --all or -i"),
    ({"kernels": (-1,)}, "rung ids are >= 0"),
    ({"max_noise": 0.5, "budget": 1.0}, "--max-noise 0.5 and --budget 1 conflict"),
    ({"min_time": 1.0, "device": "cpu"}, "--min-time 1 goes with --max-noise"),  # the CPU stops on time
    ({"noise_timeout": 3.0, "budget": 1.0}, "--noise-timeout 3 goes with --max-noise"),
    ({"max_noise": 1.0, "min_time": 3.0, "noise_timeout": 2.0}, "--min-time 3 is longer than --noise-timeout 2"),
])
def test_options_that_clash_are_refused(given, fragment):
    with pytest.raises(UserError, match=fragment):
        RunOptions(**given)


def test_options_are_frozen_and_saved_as_json_safe_values():
    options = RunOptions(command="sizes", sweep="8,16", results_dir="out", kernels=[1, 2])
    assert options.kernels == (1, 2) and options.results_dir == Path("out")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 3
    saved = options.saved()
    assert saved["kernels"] == [1, 2] and saved["results_dir"] == "out" and saved["all"] is False
    assert saved["sweep"] == "8,16" and "all_rungs" not in saved  # the name records have always used


def test_budgets_give_way_to_what_the_user_gave():
    assert RunOptions().budget_for("cpu").max_seconds == 2.0
    assert RunOptions().budget_for("gpu").max_seconds == DEFAULT_NOISE_TIMEOUT["gpu"]  # stops on noise by then
    assert RunOptions(command="tune").budget_for("gpu").max_seconds == 0.15
    only_max = RunOptions(max_samples=1).budget_for("cpu")
    assert (only_max.min_samples, only_max.max_samples) == (1, 1)  # no clash with the default minimum


def test_a_noise_target_makes_the_budget_stop_on_noise():
    """--max-noise is in percent; the budget carries it as a fraction, its
    time-out as the most seconds, and the device's defaults where not given."""
    assert RunOptions().budget_for("gpu").max_noise == 0.005  # the GPU's default: stop on 0.5% noise
    assert RunOptions().budget_for("cpu").max_noise is None  # the CPU's: stop on time
    assert RunOptions(budget=0.5).budget_for("gpu").max_noise is None  # --budget stops on time
    gpu = RunOptions(max_noise=0.5).budget_for("gpu")
    assert (gpu.max_noise, gpu.min_seconds, gpu.max_seconds, gpu.max_samples) == (
        0.005, DEFAULT_MIN_TIME["gpu"], DEFAULT_NOISE_TIMEOUT["gpu"], NOISE_MAX_SAMPLES)
    cpu = RunOptions(max_noise=2, min_time=0.25, noise_timeout=3, max_samples=400, device="cpu").budget_for("cpu")
    assert (cpu.max_noise, cpu.min_seconds, cpu.max_seconds, cpu.max_samples) == (0.02, 0.25, 3, 400)
    # a --min-time the user gives is not cut short by the default cap (5000 GPU samples: about a second)
    assert RunOptions(min_time=3).budget_for("gpu").max_samples == MAX_SAMPLES
    assert RunOptions(min_time=3, max_samples=800).budget_for("gpu").max_samples == 800  # unless capped by name
    assert RunOptions(min_time=3, rounds=3).budget_for("gpu").visit().max_samples == MAX_SAMPLES // 3
    short = RunOptions(max_noise=1, noise_timeout=0.05).budget_for("cpu")
    assert short.min_seconds == 0.05  # the default minimum never outlasts a shorter time-out
    assert RunOptions(max_noise=1).saved()["max_noise"] == 1


def test_flipping_the_default_to_noise_is_one_constant(monkeypatch):
    monkeypatch.setattr(options_module, "DEFAULT_MAX_NOISE", {"gpu": 0.5, "cpu": 0.5})
    assert RunOptions().budget_for("gpu").max_noise == 0.005 == RunOptions().budget_for("cpu").max_noise
    assert RunOptions(budget=1.0).budget_for("gpu").max_noise is None  # --budget still stops on time
    assert RunOptions(command="tune").budget_for("gpu").max_noise is None  # tune keeps its short budget
    assert RunOptions(min_time=0.2).budget_for("gpu").min_seconds == 0.2  # no --max-noise needed then
    with pytest.raises(UserError, match="--min-time 0.2 goes with --max-noise"):
        RunOptions(min_time=0.2, budget=1.0)


def test_compare_all_on_the_cpu_groups_rows_by_thread_count():
    plan = build_plan(RunOptions(command="compare", all_rungs=True, device="cpu", threads=None))
    ids = [(r.kernel_id, r.threads) for r in plan.rows]
    assert ids[0] == (0, 1) and (1, 1) in ids and ids.count((0, 1)) == 1
    multi = [r for r in plan.rows if r.threads != 1]
    assert multi and multi[0].kernel_id == 0  # OpenBLAS at the threads of the rungs compared with it
    assert plan.shapes == (RunOptions().shape("cpu"),) and plan.device == "cpu" and plan.gpus is None


def test_compare_on_the_gpu_brings_the_library_rows_of_each_precision():
    every = gpu_plan(command="compare", all_rungs=True)
    library = [r.precision for r in every.rows if r.kernel_id == 0 and r.device == "gpu"]
    assert library[0] == "fp32" and len(library) == len(set(library))
    assert set(library) == {comparison_precision(s.precision) for s in ladder("gpu")}  # each family's own row
    assert every.rows[-1] == Row("cpu", 0, "fp32", threads=every.rows[-1].threads)  # OpenBLAS beside
    assert {r.kernel_id for r in every.rows} == {s.id for s in ladder("gpu")}
    fp32 = gpu_plan(command="compare", all_rungs=True, precisions=("fp32",))
    assert {r.precision for r in fp32.rows} == {"fp32"} and 14 not in {r.kernel_id for r in fp32.rows}
    tf32 = gpu_plan(command="compare", kernels=(17,))
    assert [(r.kernel_id, r.precision) for r in tf32.rows if r.device == "gpu"] == \
        [(0, "fp32"), (0, "tf32"), (17, "tf32")]


def test_a_plan_is_plain_data_a_worker_can_receive():
    plan = gpu_plan(command="sizes", sweep="64..256", kernels=(2,), gpus="all", seed=7)
    assert plan.gpus == (0, 1) and plan.spread == "shapes" and len(plan.shapes) == 3
    assert pickle.loads(pickle.dumps(plan)) == plan
    share = plan.share(1, plan.rows[:1], plan.shapes[:1])
    assert (share.gpu, share.gpus, share.rows, share.seed) == (1, None, plan.rows[:1], 7)


def test_tune_rows_are_the_library_rows_then_one_per_candidate():
    plan = gpu_plan(command="tune", kernels=(12,), gpus="all")
    assert plan.spread == "candidates" and plan.tuned_row.kernel_id == 12 and not plan.use_tuning
    shape = plan.shapes[0]
    tuned = plan.with_candidates({shape: [{"BM": 64}, {"BM": 128}]}, not_compiled=3)
    assert [(r.params, r.shape) for r in tuned.rows if r.kernel_id == 12] == [((("BM", 64),), shape),
                                                                              ((("BM", 128),), shape)]
    assert tuned.rows[0].kernel_id == 0 and tuned.rows[0].shape is None and tuned.not_compiled == 3


@pytest.mark.parametrize("given, fragment", [
    ({"command": "run"}, "nothing to run"),
    ({"command": "compare"}, "nothing to compare"),
    ({"command": "tune"}, "tune one kernel"),
    ({"command": "tune", "kernels": (12, 13)}, "tune one kernel"),
    ({"command": "tune", "kernels": (12,), "device": "cpu"}, "--device cpu was given"),
    ({"command": "tune", "kernel_files": (EXAMPLE_C,)}, "is a C kernel"),
    ({"command": "compare", "kernels": (14,), "device": "cpu"}, "no CPU rung 14"),
    ({"command": "compare", "all_rungs": True, "device": "cpu", "precisions": ("tf32",)}, "precision tf32"),
    ({"command": "sizes", "device": "cpu"}, "--sweep"),
    ({"command": "sizes", "sweep": "0..4", "device": "cpu"}, "sweep '0..4'"),
])
def test_plans_that_cannot_be_are_one_line(given, fragment):
    with pytest.raises(UserError, match=fragment):
        build_plan(RunOptions(**given))


def test_a_kernel_file_row_carries_its_path():
    plan = build_plan(RunOptions(command="compare", kernels=(1,), kernel_files=(EXAMPLE_C,), device="auto",
                                 params=("KB=64",)))
    assert plan.device == "cpu"  # a .c file names its device
    users = [r for r in plan.rows if r.kernel_file]
    assert users and all(r.kernel_id == -1 and r.kernel_file == EXAMPLE_C for r in users)
    assert plan.overrides == (("KB", 64),) and {r.kernel_file for r in plan.rows if r.kernel_file} == {EXAMPLE_C}
