"""GPU selection and multi-GPU work sharing, with stand-ins for the GPU:
a fake backend for --gpu, stand-in worker functions for --gpus (real spawned
processes, no CUDA)."""

import csv
import io
import json
import os
import re

import pytest
from rich.console import Console

from gemmbench import cli
from gemmbench.backend import Shape
from gemmbench.output.report import Reporter
from gemmbench.output.runs import show_record
from gemmbench.fsutil import write_atomic
from gemmbench.records.results import KernelResult, RunRecord, to_json
from gemmbench.records.store import load
from gemmbench.verify import Verification
from gemmbench.backend import Budget
from gemmbench.execute.gpus import WorkOrder, plan_orders, run_on_gpus, run_workers, split
from gemmbench.execute.interrupts import Interrupts
from gemmbench.execute.recording import Recording
from gemmbench.options import RunOptions
from gemmbench.plan import Plan, Row, build_plan, parse_gpus


# -- parsing and sharing out ------------------------------------------------------

def test_parse_gpus():
    assert parse_gpus("all", 4) == [0, 1, 2, 3]
    assert parse_gpus("0,2,3", 4) == [0, 2, 3]
    assert parse_gpus(" 3 , 1", 4) == [3, 1]
    for text, fragment in [("0,4", "no GPU 4"), ("1,1", "twice"), ("x", "'all' or GPU indices"), ("", "indices")]:
        with pytest.raises(ValueError, match=fragment):
            parse_gpus(text, 4)
    with pytest.raises(ValueError, match="no GPU is visible"):
        parse_gpus("all", 0)


def test_split_balances_cost_and_keeps_order():
    sizes = [128, 256, 512, 1024, 2048, 4096]
    parts = split(sizes, 2, cost=lambda s: s ** 3)
    assert sorted(x for p in parts for x in p) == sizes
    assert all(p == sorted(p) for p in parts)
    assert parts[0] == [4096] and parts[1] == [128, 256, 512, 1024, 2048]  # 4096^3 outweighs the rest
    even = split(list(range(10)), 3)
    assert sorted(len(p) for p in even) == [3, 3, 4]
    assert split([1], 3) == [[1], [], []]


ROWS = (Row("gpu", 0, "fp32"), Row("gpu", 0, "tf32"), Row("gpu", 12, "fp32", (("BM", 64),)),
        Row("gpu", 12, "fp32", (("BM", 128),)), Row("gpu", 12, "fp32", (("BM", 256),)))
SHAPES = (Shape(256, 256, 256), Shape(1024, 1024, 1024), Shape(4096, 4096, 4096))


def _plan(gpus, rows=ROWS, shapes=SHAPES[:1], spread="same", command="compare"):
    return Plan(command, "gpu", tuple(rows), tuple(shapes), Budget(), gpus=tuple(gpus), spread=spread)


def test_plan_orders():
    same = plan_orders(_plan([0, 1]))
    assert [(o.gpu, o.plan.gpu, o.plan.rows, o.plan.shapes) for o in same] == \
        [(0, 0, ROWS, SHAPES[:1]), (1, 1, ROWS, SHAPES[:1])]
    assert all(o.plan.gpus is None for o in same)  # a worker's share runs on its one GPU
    by_shape = plan_orders(_plan([0, 1], ROWS[:1], SHAPES, "shapes"))
    assert [o.plan.shapes for o in by_shape] == [SHAPES[2:], SHAPES[:2]]
    cands = plan_orders(_plan([2, 3], spread="candidates"))
    assert [o.gpu for o in cands] == [2, 3]
    assert all(o.plan.rows[:2] == ROWS[:2] for o in cands)  # the library rows run on every GPU
    assert sorted(dict(r.params)["BM"] for o in cands for r in o.plan.rows[2:]) == [64, 128, 256]
    assert len(plan_orders(_plan([0, 1, 2, 3], spread="candidates"))) == 3  # no empty worker
    with_cpu = _plan([0, 1], ROWS[:1] + (Row("cpu", 0, "fp32", threads=2),))
    assert all(o.plan.rows == ROWS[:1] for o in plan_orders(with_cpu))  # OpenBLAS runs in the parent


# -- stand-in workers: real 'spawn' processes, no CUDA --------------------------------

def fake_gpu(index: int) -> dict:
    return {"name": "Fake GPU", "compute_capability": "9.0", "sm_count": 132, "max_sm_clock_mhz": 1980.0,
            "peak_fp32_tflops": 66.9, "driver_version": "580", "cuda_driver_api": "13.0", "index": index,
            "uuid": f"GPU-{index}", "pci_bus_id": f"0000:{index:02x}:00.0"}


def fake_worker(order: WorkOrder, outbox):
    """Sends what a GPU worker sends; GPU 1 runs 5% slower. A worker whose
    FAKE_FATE says so fails like a lost GPU, or dies without a word."""
    fate = json.loads(os.environ.get("FAKE_FATE", "{}")).get(str(order.gpu))
    if fate == "die":
        os._exit(3)
    outbox.put((order.gpu, "environment", {"gpu": fake_gpu(order.gpu), "notes": [f"GPU {order.gpu}: Fake GPU"]}))
    if fate == "lost":
        outbox.put((order.gpu, "error", "LogicError: cuCtxSynchronize failed: GPU is lost"))
        return
    for shape in order.plan.shapes:
        for row in order.plan.rows:
            kid, precision, params = row.kernel_id, row.precision, row.given_params
            seconds = 1e-3 * (1 + kid / 10) * (1.05 if order.gpu == 1 else 1.0)
            r = KernelResult("gpu", kid, f"rung{kid}", precision, shape, "pass", params=params or {},
                             params_source="given" if params else "default",
                             verification=Verification(1e-7, 1e-5, 0), samples=[seconds] * 5, gpu=order.gpu)
            outbox.put((order.gpu, "result", r.to_dict()))
    outbox.put((order.gpu, "state", {"sm_clock_mhz": 1980 - 100 * order.gpu, "throttle": [],
                                     "temperature_c": 40 + order.gpu, "power_w": 300.0}))
    outbox.put((order.gpu, "done", None))


def test_run_workers_reports_a_failed_worker_and_the_others_finish(monkeypatch):
    monkeypatch.setenv("FAKE_FATE", json.dumps({"1": "lost", "2": "die"}))
    plan = _plan([0, 1, 2], ROWS[:1], [Shape(64, 64, 64)])
    orders = [WorkOrder(g, plan.share(g, plan.rows, plan.shapes)) for g in (0, 1, 2)]
    seen = []
    run_workers(orders, lambda gpu, kind, payload: seen.append((gpu, kind, payload)), fake_worker, poll_seconds=0.2)
    kinds = {g: [k for gg, k, _ in seen if gg == g] for g in (0, 1, 2)}
    assert kinds[0] == ["environment", "result", "state", "done"]
    assert kinds[1] == ["environment", "error"]
    assert kinds[2] == ["error"]
    assert "exit code 3" in next(p for g, k, p in seen if g == 2)


def _fake_row(gpu: int, shape: Shape, rounds: int | None = None) -> KernelResult:
    notes = {"rounds": [1e-3] * rounds} if rounds else {}  # the medians of the visits it kept
    return KernelResult("gpu", 12, "rung12", "fp32", shape, "pass", verification=Verification(1e-7, 1e-5, 0),
                        samples=[1e-3] * 5, notes=notes, gpu=gpu)


def stopped_share(order: WorkOrder, send, on_result):
    """A GPU worker's share (gpus.serve's run_share) that finishes its first
    shape and is stopped in its second, a --rounds shape, whose kept row goes
    up with the Interrupted as measured_rows sends it. FAKE_STOP says how:
    "ctrl-c", the terminal's SIGINT comes to this worker (ignored) and to the
    parent (sent from here), which sends SIGTERM; "sigterm", someone else
    sends GPU 1 SIGTERM (GPU 0 finishes both shapes); "wait", it waits before
    its first row. Never stopped, it ends after 60 s (the test then fails: it
    saw "done")."""
    import signal
    import time
    from gemmbench.execute.interrupts import Interrupted
    how = os.environ["FAKE_STOP"]
    send("environment", {"gpu": fake_gpu(order.gpu)})
    first, second = order.plan.shapes[:2]
    if how != "wait":
        on_result(_fake_row(order.gpu, first))
    if how == "sigterm" and order.gpu == 0:
        on_result(_fake_row(order.gpu, second))
        return
    try:
        if how == "ctrl-c":
            os.kill(os.getpid(), signal.SIGINT)  # ignored by a worker
            os.kill(os.getppid(), signal.SIGINT)
        elif how == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.01)
    except Interrupted as stop:
        if how != "wait":
            stop.rows = [_fake_row(order.gpu, second, rounds=1 if how == "ctrl-c" else 2)]
        raise


def stopped_worker(order: WorkOrder, outbox):
    from gemmbench.execute.gpus import serve
    serve(order, outbox, stopped_share)


STOPPED_SHAPES = [Shape(64, 64, 64), Shape(96, 96, 96)]


def _run_stopped(gpus: list[int]):
    """run_on_gpus over STOPPED_SHAPES with stopped_worker, signal handlers in place as in a command:
    (the Interrupted it raised, the record, the notes it printed)."""
    from gemmbench.execute.interrupts import Interrupted
    record = RunRecord("compare", "gpu", {"seed": 0, "flush_l2": False}, {"gpu": fake_gpu(0), "gpus": {}})
    notes = []
    with Interrupts() as interrupts:
        reporter = Reporter("csv", quiet=True)
        reporter.note = notes.append
        with pytest.raises(Interrupted) as stop:
            run_on_gpus(_plan(gpus, ROWS[:1], STOPPED_SHAPES), FakeDevices(), [],
                        Recording(record, None, interrupts, notes.append), reporter, stopped_worker)
    return stop.value, record, notes


def test_ctrl_c_on_gpus_keeps_every_row_the_workers_finished(monkeypatch):
    """--gpus, Ctrl-C: the parent stops its workers with SIGTERM and keeps
    what they send back, the interrupted --rounds shape's rows included; no
    worker is reported failed, and the run ends interrupted."""
    monkeypatch.setenv("FAKE_STOP", "ctrl-c")
    stop, record, notes = _run_stopped([0])
    assert stop.name == "SIGINT"
    assert [(r.shape, r.gpu, len(r.notes.get("rounds", []))) for r in record.results] == [
        (STOPPED_SHAPES[0], 0, 0), (STOPPED_SHAPES[1], 0, 1)]
    assert record.environment["gpus"]["0"]["interrupted"] == "SIGTERM"
    assert "error" not in record.environment["gpus"]["0"]
    assert any("GPU 0: stopped by SIGTERM" in n for n in notes) and not any("failed" in n for n in notes)


def test_a_signal_while_a_row_is_read_waits_for_the_row(monkeypatch):
    """Ctrl-C that lands while the parent reads a worker's row: the row is
    handed on first, then the run stops as usual. (Raised in the middle of the
    read, it left half a message in the pipe: the next read failed, "Ran out
    of input", and the row was lost; seen on a loaded 2-core machine.)"""
    import signal
    from gemmbench.execute import gpus
    receive, sent = gpus._receive, []

    def signalled_while_reading(inbox, timeout):
        message = receive(inbox, timeout)
        if message[1] == "result" and not sent:
            sent.append(message)
            os.kill(os.getpid(), signal.SIGINT)  # its handler runs before this read returns
        return message
    monkeypatch.setattr(gpus, "_receive", signalled_while_reading)
    monkeypatch.setenv("FAKE_STOP", "row")  # the first row, then wait to be stopped
    stop, record, notes = _run_stopped([0])
    assert stop.name == "SIGINT" and sent
    assert [(r.shape, r.gpu, len(r.notes.get("rounds", []))) for r in record.results] == [
        (STOPPED_SHAPES[0], 0, 0), (STOPPED_SHAPES[1], 0, 2)]
    assert record.environment["gpus"]["0"]["interrupted"] == "SIGTERM"
    assert not any("failed" in n for n in notes)


def test_ctrl_c_while_the_workers_start_stops_them_without_a_failure(monkeypatch, capfd):
    """A SIGINT that comes while the workers are being started waits until
    they are (the signals are blocked meanwhile), then stops them as during
    the run: each one, SIGTERM held back until it has set its own handling,
    says "interrupted"; nothing failed, no traceback."""
    import contextlib
    import signal
    from gemmbench.execute import gpus
    monkeypatch.setenv("FAKE_STOP", "wait")
    starting = gpus._signals_blocked

    @contextlib.contextmanager
    def interrupted_while_starting():
        with starting():
            yield
            os.kill(os.getpid(), signal.SIGINT)  # pending until the mask is put back
    monkeypatch.setattr(gpus, "_signals_blocked", interrupted_while_starting)
    stop, record, notes = _run_stopped([0, 1])
    assert stop.name == "SIGINT" and record.results == []
    assert {g: v.get("interrupted") for g, v in record.environment["gpus"].items()} == {"0": "SIGTERM",
                                                                                        "1": "SIGTERM"}
    assert not any("failed" in n for n in notes)
    assert "Traceback" not in capfd.readouterr().err


def test_a_worker_stopped_on_its_own_keeps_its_rows_and_the_run_ends_interrupted(monkeypatch):
    monkeypatch.setenv("FAKE_STOP", "sigterm")
    stop, record, _ = _run_stopped([0, 1])
    assert stop.name == "SIGTERM"
    assert sorted((r.gpu, r.shape.M, len(r.notes.get("rounds", []))) for r in record.results) == [
        (0, 64, 0), (0, 96, 0), (1, 64, 0), (1, 96, 2)]
    assert record.environment["gpus"]["1"]["interrupted"] == "SIGTERM"
    assert record.planned == 4  # both GPUs' rows: a run stopped on two GPUs never says "4 of 2 kernels"


class FakeDevices:
    """What run_on_gpus needs of Devices, without a GPU."""

    gpu = None


def _run(gpus, command, rows, shapes, spread, path, fate=None, monkeypatch=None):
    """run_on_gpus as record_run drives it, the record saved at the end."""
    if fate:
        monkeypatch.setenv("FAKE_FATE", json.dumps(fate))
    plan = _plan(gpus, rows, shapes, spread, command)
    record = RunRecord(command, "gpu", {"seed": 0, "flush_l2": False, "top": 5},
                       {"gpu": fake_gpu(gpus[0]), "gpus": {}})
    recording = Recording(record, None, Interrupts(), lambda message: None)
    failed = run_on_gpus(plan, FakeDevices(), [], recording, Reporter("csv", quiet=True), fake_worker)
    if path is not None:
        write_atomic(path, to_json(record))
    return record, 1 if record.failed or failed else 0


def _rendered(record, fmt="csv"):
    reporter = Reporter(fmt)
    reporter.out = Console(file=io.StringIO(), width=200, color_system=None)
    show_record(reporter, record)
    return reporter.out.file.getvalue()


def test_rows_from_the_workers_show_live_under_their_gpu(monkeypatch):
    """On a terminal the live table (output/live.py) draws each worker's rows
    as they arrive, one table per GPU as the final output has them."""
    from gemmbench.output import live
    monkeypatch.setattr(live, "COST_FACTOR", 0.0)  # a draw for every row
    plan = _plan([0, 1], ROWS[:3], SHAPES[:1])
    record = RunRecord("compare", "gpu", {"seed": 0, "flush_l2": False}, {"gpu": fake_gpu(0), "gpus": {}})
    reporter = Reporter("table", live_rows=True)
    reporter.out, reporter.err = (Console(file=io.StringIO(), force_terminal=True, width=150, height=60)
                                  for _ in range(2))
    run_on_gpus(plan, FakeDevices(), [], Recording(record, None, Interrupts(), lambda m: None), reporter, fake_worker)
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", reporter.err.file.getvalue())
    last = drawn[drawn.rindex("GPU 0\n"):]  # the last frame: both GPUs' tables, all their rows
    last = "\n".join(line for line in last.splitlines() if not line.startswith("compare "))  # less its progress line
    assert last.index("GPU 0\n") < last.index("GPU 1\n")
    for part in last.split("GPU 1\n"):
        assert "gemmbench compare · 256x256x256" in part and part.count("rung12") == 1 and part.count("rung0") == 2
    assert not reporter.out.file.getvalue()  # the final tables are the caller's to print


def test_compare_on_two_gpus_is_one_record_with_a_summary(tmp_path):
    path = tmp_path / "compare.json"
    record, code = _run([0, 1], "compare", [Row("gpu", 0, "fp32"), Row("gpu", 12, "fp32")], [Shape(64, 64, 64)],
                        "same", path)
    assert code == 0
    assert [(r.gpu, r.kernel_id) for r in record.results] == [(0, 0), (0, 12), (1, 0), (1, 12)]
    saved = json.loads(path.read_text())
    assert [r["gpu"] for r in saved["results"]] == [0, 0, 1, 1] and set(saved["environment"]["gpus"]) == {"0", "1"}
    out = _rendered(record)
    lines = out.splitlines()
    summary = list(csv.DictReader(lines[lines.index(next(l for l in lines if l.startswith("gpu,name"))):]))
    gpu0, gpu1 = summary[0], summary[1]  # plain numbers, one value per column
    assert gpu0["gpu"] == "0" and gpu1["gpu"] == "1" and float(gpu1["sm_clock_mhz"]) == 1880
    assert float(gpu1["temperature_c"]) == 41
    assert float(gpu1["best_ratio"]) < 1 < float(gpu0["best_ratio"])  # GPU 1 is the slow one: below the median
    assert out.count("device,kernel_id,kernel") == 2  # one results table per GPU
    assert _rendered(load(path).record) == out  # show prints what the run printed


def test_a_lost_gpu_is_reported_and_the_other_finishes(tmp_path, monkeypatch):
    path = tmp_path / "compare.json"
    record, code = _run([0, 1, 2], "compare", [Row("gpu", 0, "fp32"), Row("gpu", 12, "fp32")],
                        [Shape(64, 64, 64)], "same", path, fate={"1": "lost"}, monkeypatch=monkeypatch)
    assert code == 1
    assert {r.gpu for r in record.results} == {0, 2}
    assert "GPU is lost" in record.environment["gpus"]["1"]["error"]
    out = _rendered(load(path).record)
    assert ",LogicError: cuCtxSynchronize failed: GPU is lost" in out  # the error column of GPU 1


def test_sizes_share_the_shapes_and_tune_the_candidates(tmp_path):
    sizes, code = _run([0, 1], "sizes", [Row("gpu", 0, "fp32")], SHAPES, "shapes", None)
    assert code == 0 and [(r.shape.M, r.gpu) for r in sizes.results] == [(256, 1), (1024, 1), (4096, 0)]
    assert any("shapes shared out" in n for n in sizes.environment["notes"])
    rows = [Row("gpu", 0, "fp32")] + [Row("gpu", 12, "fp32", (("BM", bm),)) for bm in (64, 128, 256)]
    tune, code = _run([0, 1], "tune", rows, SHAPES[:1], "candidates", None)
    candidates = [r for r in tune.results if r.kernel_id == 12]
    assert code == 0 and sorted(r.params["BM"] for r in candidates) == [64, 128, 256]
    assert {r.gpu for r in candidates} == {0, 1} and [r.gpu for r in tune.results if r.kernel_id == 0] == [0, 1]
    assert "BM=128,given" in _rendered(tune)  # the candidates, one CSV row each
    table = _rendered(tune, "text")  # one ranking over both GPUs: each row says whose it is
    assert table.count("rung0 · GPU 0") == 1 and table.count("rung0 · GPU 1") == 1
    assert table.count("rung12 · GPU 0") == 2 and table.count("rung12 · GPU 1") == 1


# -- --gpu / --gpus through the command line, with a stand-in backend -------------------

@pytest.fixture
def fake_gpus(monkeypatch):
    """Two GPUs that open (nothing else of CUDA is there): GPU 2 and up do not exist."""
    import gemmbench.gpu.device as device
    opened = []

    def open_device(ordinal=None):
        if ordinal >= 2:
            raise device.GpuUnavailable(f"no GPU {ordinal}: 2 GPUs visible")
        opened.append(ordinal)
    monkeypatch.setattr(device, "open_device", open_device)
    monkeypatch.setattr(device, "device_count", lambda: 2)
    return opened


def test_gpu_option_opens_that_gpu(fake_gpus):
    plan = build_plan(RunOptions(command="run", kernels=(1,), gpu=1))
    assert (plan.device, plan.gpu, plan.gpus) == ("gpu", 1, None) and fake_gpus == [1]
    assert build_plan(RunOptions(command="run", kernels=(1,))).gpu == 0 and fake_gpus == [1, 0]  # default: GPU 0
    multi = build_plan(RunOptions(command="compare", kernels=(1,), gpus="all"))
    assert multi.gpus == (0, 1) and fake_gpus[-1] == 0  # the parent plans on the first
    single = build_plan(RunOptions(command="compare", kernels=(1,), gpus="1"))
    assert single.gpus is None and single.gpu == 1  # one GPU: no worker processes


@pytest.mark.parametrize("args, fragment", [
    (["run", "-i", "1", "--gpu", "5"], "no usable GPU: no GPU 5"),
    (["run", "-i", "1", "--gpu", "-1"], "out of range"),
    (["compare", "--all", "--gpus", "0,7"], "no GPU 7"),
    (["compare", "--all", "--gpus", "0,0"], "twice"),
    (["sizes", "--sweep", "8,16", "--gpus", "all", "--gpu", "0"], "not both"),
    (["tune", "-i", "12", "--gpus", "all", "--device", "cpu"], "--device cpu"),
    (["run", "-i", "1", "--gpus", "all"], "No such option"),
    (["run", "-i", "1", "--gpu", "1", "--device", "cpu"], "does not go with --device cpu"),
    (["run", "-i", "1", "--device", "cpu", "--baseline", "/nonexistent.json"], "no such file"),
])
def test_gpu_selection_errors_are_one_line(capsys, fake_gpus, args, fragment):
    code = cli.main(args + ["--no-save"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and fragment in err, err


def _scaled_record(saved, tmp_path, factor: float, name: str):
    """The saved record with every sample ``factor`` times as long: a baseline
    whose verdict against a new run is known whatever this machine's load."""
    data = json.loads(saved.read_text())
    for r in data["results"]:
        r["samples_s"] = [t * factor for t in r["samples_s"]]
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_baseline_diff_in_the_same_output(capsys, tmp_path):
    args = ["run", "-i", "2", "--device", "cpu", "-m", "33", "-n", "17", "-k", "29", "--warmup", "0",
            "--min-samples", "5", "--max-samples", "5", "--budget", "0", "--results-dir", str(tmp_path)]
    assert cli.main(args) == 0
    capsys.readouterr()
    saved = next(tmp_path.glob("run-cpu-*.json"))
    slow, fast = (_scaled_record(saved, tmp_path, f, n) for f, n in ((1000.0, "slow.json"), (0.001, "fast.json")))
    code = cli.main(args + ["--no-save", "--baseline", str(slow), "--format", "csv"])
    out, _ = capsys.readouterr()
    assert code == 0  # a thousand times faster than the baseline: no regression
    assert "old_gflops,new_gflops,change_pct" in out and out.startswith("device,kernel_id,kernel")
    code = cli.main(args + ["--no-save", "--baseline", str(fast), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1  # a thousand times slower: a regression, and the exit code says so
    assert data["baseline_diff"]["baseline"] == str(fast) and len(data["baseline_diff"]["rows"]) == 2
    assert data["baseline_diff"]["exit_code"] == 1


def _gpu_count() -> int:
    try:
        from gemmbench.gpu.device import device_count
        return device_count()
    except Exception:
        return 0


@pytest.mark.skipif(_gpu_count() > 0, reason="checks the worker on a machine without a GPU")
def test_the_real_worker_without_a_gpu_reports_why():
    from gemmbench.execute.gpus import gpu_worker
    seen = []
    order = WorkOrder(0, _plan([0], ROWS[:1], [Shape(8, 8, 8)]).share(0, ROWS[:1], [Shape(8, 8, 8)]))
    run_workers([order], lambda gpu, kind, payload: seen.append((gpu, kind, payload)), gpu_worker)
    assert len(seen) == 1 and seen[0][:2] == (0, "error") and "no usable GPU" in seen[0][2]


@pytest.mark.gpu
def test_compare_on_every_gpu_and_run_on_the_last(capsys, tmp_path):
    count = _gpu_count()
    fast = ["--warmup", "0", "--min-samples", "3", "--max-samples", "5", "--budget", "0", "-m", "256", "-n", "256",
            "-k", "256", "--results-dir", str(tmp_path)]
    code = cli.main(["compare", "-i", "2", "--gpus", "all", *fast, "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    loaded = load(next(tmp_path.glob("compare-gpu-*.json")))
    gpus = {r.gpu for r in loaded.record.results if r.device == "gpu"}
    assert gpus == set(range(count)) and _rendered(loaded.record) == out
    # a process holds one GPU's context (this one now holds GPU 0's): another GPU needs a process of its own
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "gemmbench", "run", "-i", "2", "--gpu", str(count - 1), *fast,
                           "--no-save", "--json"], capture_output=True, text=True)
    data = json.loads(done.stdout)
    assert done.returncode == 0 and data["environment"]["gpu"]["index"] == count - 1
    assert data["environment"]["gpu"]["pci_bus_id"] and {r["gpu"] for r in data["results"]} == {count - 1}


def test_a_process_holds_one_gpu(monkeypatch):
    import gemmbench.gpu.device as device
    monkeypatch.setattr(device, "_opened", [0])
    assert device.selected_ordinal() == 0
    with pytest.raises(device.GpuUnavailable, match="GPU 0 is already open in this process; GPU 1 needs its own"):
        device.open_device(1)


# -- a kernel file under --gpus: every worker builds its row -1 from the plan ------------

def test_a_workers_rows_include_the_kernel_files(tmp_path):
    """The bug this guards: a worker rebuilt its rows from the shipped ladder
    alone and could not find row -1. Rows now carry the kernel file, and
    Devices builds them the same way in any process (here a CPU plan, whose
    kernel file runs in its isolated worker)."""
    from gemmbench.execute.devices import Devices
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "blocked_sgemm.c")
    plan = build_plan(RunOptions(command="compare", kernels=(1,), kernel_files=(example,), device="cpu",
                                 m=16, n=16, k=16))
    assert [(r.kernel_id, r.kernel_file) for r in plan.rows if r.kernel_id < 0] == [(-1, example)]
    share = plan.share(0, plan.rows, plan.shapes)
    entries = Devices(share).entries(share.rows)
    user = [e for e in entries if e.spec.id == -1]
    assert len(user) == 1 and user[0].isolated is not None and user[0].spec.source.endswith("blocked_sgemm.c")


@pytest.mark.gpu
def test_a_kernel_file_in_a_real_worker_on_gpu_0(tmp_path):
    """A real worker process on one GPU (--gpus 0 alone runs in-process, so
    the plan's GPUs are set to (0,) here): the kernel file's rows PASS in it."""
    import dataclasses
    from gemmbench.commands import finish
    from gemmbench.execute.devices import Devices
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "tiled_sgemm.cu")
    options = RunOptions(command="compare", kernels=(2,), kernel_files=(example,), gpus="0", m=128, n=96, k=64,
                         warmup=0.0, min_samples=3, max_samples=5, budget=0.0, results_dir=tmp_path, fmt="csv")
    plan = dataclasses.replace(build_plan(options), gpus=(0,))
    devices = Devices(dataclasses.replace(plan, gpus=None))
    code = finish(options, plan, devices, Reporter("csv", quiet=True), None)
    record = load(next(tmp_path.glob("compare-gpu-*.json"))).record
    gpu_rows = [r for r in record.results if r.device == "gpu"]
    assert code == 0, [(r.name, r.reason) for r in record.results]
    assert {r.kernel_id for r in gpu_rows} == {0, 2, -1} and all(r.status == "pass" for r in gpu_rows)
    assert all(r.gpu == 0 for r in gpu_rows) and "0" in record.environment["gpus"]
