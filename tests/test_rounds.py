"""--rounds: the rows of a shape timed in turns, each row's result made from all its rounds."""

import signal
import statistics

import pytest

from gemmbench.backend import Budget, Shape
from gemmbench import cli
from gemmbench.errors import UserError
from gemmbench.execute.interrupts import Interrupted
from gemmbench.execute.local import Batch, Entry, run_plan
from gemmbench.execute.rounds import turns
from gemmbench.options import RunOptions
from gemmbench.output.rows import footer_lines
from gemmbench.fsutil import write_atomic
from gemmbench.records.results import DISTURBED, RunRecord, rounds_spread, to_json
from gemmbench.records.store import load
from gemmbench.rungs import get_spec
from test_contention import FakeBackend


class LoggingBackend(FakeBackend):
    """FakeBackend that logs which rung each measure() and each verification (set_c) was for,
    and fails a rung's measure() where its script says None."""

    def __init__(self, times):
        super().__init__(times)
        self.measured, self.verified = [], []

    def set_c(self, c, output="fp32"):
        self.verified.append(self.current)
        super().set_c(c, output)

    def measure(self, gemm, alpha, beta, budget, flush_l2=False):
        self.measured.append(self.current)
        if self.times[self.current][0] is None:
            self.times[self.current].pop(0)
            raise RuntimeError("illegal memory access")
        return super().measure(gemm, alpha, beta, budget, flush_l2)


def run_rounds(times, rounds, backend=None):
    backend = backend or LoggingBackend(times)
    entries = [Entry(backend, get_spec("gpu", i)) for i in sorted(times)]
    plan = Batch(entries, [Shape(8, 8, 8)], budget=Budget(0, 6, 60, 0, rounds=rounds), device="gpu")
    return backend, run_plan(plan, lambda result: None)


def test_rows_take_turns_and_the_order_reverses_every_other_round():
    backend, results = run_rounds({0: [1e-3, 2e-3, 3e-3, 1e-3, 1e-3], 1: [4e-3, 5e-3, 6e-3, 6e-3],
                                   2: [7e-3, 8e-3, 9e-3, 9e-3]}, 3)
    # rounds 0 1 2 and 2 1 0, the third in two halves (0 1 2, 2 1 0), then the baseline's second look
    assert backend.measured == [0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0]
    # each row verified once (two passes: two fills of C), in its first round
    assert backend.verified == [0, 0, 1, 1, 2, 2]
    base, rung1, rung2 = results
    assert rung1.notes["rounds"] == [{"median_s": 4e-3, "samples": 5}, {"median_s": 5e-3, "samples": 5},
                                     {"median_s": 6e-3, "samples": 5}, {"median_s": 6e-3, "samples": 5}]
    assert rung1.samples == [4e-3] * 5 + [5e-3] * 5 + [6e-3] * 10
    assert rung1.stats.median == pytest.approx(statistics.median(rung1.samples))
    assert rounds_spread(rung1) == pytest.approx(0.5)
    assert [r.status for r in results] == ["pass"] * 3
    assert base.notes["recheck"]["median_s"] == 1e-3  # measured again after all the rounds


def test_an_even_count_of_rounds_alternates_whole_rounds():
    backend, _ = run_rounds({0: [1e-3] * 5, 1: [2e-3] * 4, 2: [3e-3] * 4}, 4)
    assert backend.measured == [0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0]


@pytest.mark.parametrize("rounds", range(2, 9))
@pytest.mark.parametrize("rows", range(1, 7))
def test_every_row_samples_at_the_same_mean_place_for_any_count_of_rounds(rounds, rows):
    """Weighted by each visit's share of the budget, every row's mean place in the run is the same, so a
    steady drift of the clock reaches every row alike; and the shares add up to the whole budget."""
    places = [0.0] * rows
    elapsed = 0.0
    for reverse, share, _ in turns(rounds):
        order = list(reversed(range(rows))) if reverse else list(range(rows))
        for i in order:
            places[i] += (elapsed + 0.5 / share) / share  # the middle of the visit, weighted by its share
            elapsed += 1 / share
    assert sum(1 / share for _, share, _ in turns(rounds)) == pytest.approx(1.0)
    assert max(places) == pytest.approx(min(places))


def test_one_round_is_the_plain_run():
    backend, results = run_rounds({0: [1e-3, 1e-3], 1: [2e-3]}, 1)
    assert backend.measured == [0, 1, 0]
    assert "rounds" not in results[1].notes and rounds_spread(results[1]) is None


class InterruptingBackend(LoggingBackend):
    """LoggingBackend whose ``after``-th measure() is where a SIGINT arrives."""

    def __init__(self, times, after):
        super().__init__(times)
        self.after = after

    def measure(self, gemm, alpha, beta, budget, flush_l2=False):
        if len(self.measured) == self.after:
            raise Interrupted(signal.SIGINT)
        return super().measure(gemm, alpha, beta, budget, flush_l2)


@pytest.mark.parametrize("after, kept", [
    (2, {0: 1, 1: 1}),            # in the first round: the rows it reached, one visit each
    (4, {0: 1, 1: 1, 2: 1}),      # in the second (its visits 2, 1 done): every row keeps its first only
    (7, {0: 2, 1: 2, 2: 2})])     # in the third's first half
def test_an_interrupted_shape_keeps_the_visits_every_row_had(after, kept):
    times = {0: [1e-3] * 5, 1: [2e-3] * 4, 2: [3e-3] * 4}
    backend = InterruptingBackend(times, after)
    entries = [Entry(backend, get_spec("gpu", i)) for i in sorted(times)]
    plan = Batch(entries, [Shape(8, 8, 8)], budget=Budget(0, 6, 60, 0, rounds=3), device="gpu")
    with pytest.raises(Interrupted) as stop:
        run_plan(plan, lambda result: None)
    saved = stop.value.rows  # the session keeps them (execute.recording.record_run)
    assert {r.kernel_id: len(r.notes["rounds"]) for r in saved} == kept
    assert all(r.status == "pass" and len(r.samples) == 5 * kept[r.kernel_id] for r in saved)
    record = RunRecord("compare", "gpu", {"rounds": 3}, {}, saved)
    n = next(iter(kept.values()))
    assert f"Interrupted at 8x8x8: its rows keep the {n} visit{'s' * (n > 1)} every row had (of 4)." \
        in footer_lines(record)


def test_an_interrupted_run_keeps_the_rows_of_its_rounds_in_its_record(tmp_path, monkeypatch):
    """Through the CLI on the CPU: a SIGINT in the second visit of round 2 (rung 1, then OpenBLAS: the order
    reversed) leaves a record, marked incomplete, whose two rows each kept their first visit."""
    from gemmbench.rungs import baselines
    from gemmbench.execute import local
    calls = []
    real = local._time_again

    def interrupted_once(entry, first, plan):
        calls.append(entry.spec.name)
        if len(calls) == 2:
            raise Interrupted(signal.SIGINT)
        return real(entry, first, plan)

    monkeypatch.setattr(local, "_time_again", interrupted_once)
    code = cli.main(["compare", "--device", "cpu", "-i", "1", "-m", "16", "-n", "16", "-k", "16", "--rounds", "2",
                     "--budget", "0.02", "--results-dir", str(tmp_path)])
    assert code == 128 + signal.SIGINT
    record = load(next(tmp_path.glob("*.json"))).record
    assert not record.complete and "interrupted by SIGINT" in record.incomplete_reason
    assert [len(r.notes["rounds"]) for r in record.results] == [1, 1]
    assert {r.name for r in record.results} == {baselines("cpu", ("fp32",))[0].name, get_spec("cpu", 1).name}


def test_a_row_that_fails_in_a_later_round_fails_and_the_others_finish():
    backend, results = run_rounds({0: [1e-3] * 5, 1: [2e-3, None], 2: [3e-3] * 4}, 3)
    base, broken, rung2 = results
    assert broken.status == "fail" and "illegal memory access" in broken.reason
    assert backend.measured.count(1) == 2  # not visited in the third round
    assert base.status == rung2.status == "pass" and len(rung2.notes["rounds"]) == 4  # the third in two halves


def test_the_clock_and_throttling_are_taken_over_every_round(monkeypatch):
    notes = iter([{"sm_clock_mhz": 1500.0, "throttled_share": 0.0, "throttle": [], "calls_per_sample": 1,
                   "gpu_temp_range_c": [48, 55]},
                  {"sm_clock_mhz": 1300.0, "throttled_share": 1.0, "throttle": ["SwPowerCap"], "calls_per_sample": 1,
                   "gpu_temp_range_c": [61, 64]}])

    def measure(self, gemm, alpha, beta, budget, flush_l2=False):
        seconds = self.times[self.current].pop(0)
        return [seconds] * 5, next(notes) if self.current == 1 else {}

    monkeypatch.setattr(FakeBackend, "measure", measure)
    backend = FakeBackend({1: [1e-3, 3e-3]})
    plan = Batch([Entry(backend, get_spec("gpu", 1))], [Shape(8, 8, 8)], budget=Budget(0, 6, 60, 0, rounds=2))
    row, = run_plan(plan, lambda result: None)
    # weighted by the time each round's samples span: the second spans three times the first
    assert row.notes["sm_clock_mhz"] == pytest.approx(1350.0)
    assert row.notes["throttled_share"] == pytest.approx(0.75)
    assert row.notes["throttle"] == ["SwPowerCap"] and "throttled" in row.flags
    assert DISTURBED not in row.flags
    assert row.notes["gpu_temp_range_c"] == [48, 64]  # over every round; each round keeps its own
    assert [r["gpu_temp_range_c"] for r in row.notes["rounds"]] == [[48, 55], [61, 64]]


def test_a_visit_gets_its_share_of_the_budget_and_the_whole_warm_up():
    visit = Budget(0.5, 10, 200, 6.0, max_noise=0.005, min_seconds=0.3, rounds=3).visit()
    assert visit == Budget(0.5, 4, 66, 2.0, max_noise=0.005, min_seconds=pytest.approx(0.1), rounds=1)
    tiny = Budget(0.1, 1, 2, 1.0, rounds=5).visit()
    assert tiny.min_samples == 1 and tiny.max_samples == 1
    assert Budget(rounds=1).visit() == Budget()


def test_rounds_is_an_option_of_the_benchmark_commands():
    assert RunOptions(command="sizes", rounds=4).budget_for("gpu").rounds == 4
    assert RunOptions(command="compare").budget_for("cpu").rounds == 1
    with pytest.raises(UserError, match="--rounds 0 is out of range"):
        RunOptions(command="compare", rounds=0)

def test_rounds_out_of_range_is_one_line_and_exit_2(capsys):
    assert cli.main(["compare", "--device", "cpu", "--rounds", "51", "--no-save"]) == 2
    err = capsys.readouterr().err
    assert "--rounds" in err and "1 to 50" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_footer_says_how_the_rows_were_timed():
    backend, results = run_rounds({0: [1e-3, 1.1e-3, 1e-3, 1e-3, 1e-3], 1: [2e-3] * 4}, 3)
    record = RunRecord("compare", "gpu", {"rounds": 3}, {})
    record.results.extend(results)
    line = next(l for l in footer_lines(record) if l.startswith("Timed in 3 rounds"))
    assert "furthest apart for cuBLAS at 8x8x8: 10%" in line and "the last in two halves, one each way" in line
    even = RunRecord("compare", "gpu", {"rounds": 2}, {})
    assert "halves" not in next(l for l in footer_lines(even) if l.startswith("Timed in 2 rounds"))
    assert not any(l.startswith("Timed in") for l in footer_lines(RunRecord("compare", "gpu", {"rounds": 1}, {})))


def test_a_record_of_rounds_round_trips_and_shows_them(tmp_path):
    _, results = run_rounds({0: [1e-3, 1.2e-3, 1e-3, 1e-3, 1e-3], 1: [2e-3] * 4}, 3)
    path = tmp_path / "rounds.json"
    write_atomic(path, to_json(RunRecord("compare", "gpu", {"rounds": 3}, {}, results)))
    back = load(path).record
    assert [r.notes["rounds"] for r in back.results] == [r.notes["rounds"] for r in results]
    assert any("furthest apart for cuBLAS at 8x8x8: 20%" in line for line in footer_lines(back))


class SettlingBackend(LoggingBackend):
    """LoggingBackend whose warm-up settled a held-down clock on the visits its script lists."""

    def __init__(self, times, settles):
        super().__init__(times)
        self.settles, self.visits = settles, {}

    def measure(self, gemm, alpha, beta, budget, flush_l2=False):
        samples, notes = super().measure(gemm, alpha, beta, budget, flush_l2)
        visit = self.visits[self.current] = self.visits.get(self.current, 0) + 1
        return samples, {**notes, **({"warmup_settled_s": 0.3} if visit in self.settles.get(self.current, ()) else {})}


def test_a_row_keeps_that_its_warm_up_settled_in_any_round_and_the_footer_counts_them():
    times = {0: [1e-3] * 5, 1: [2e-3] * 4, 2: [3e-3] * 4}  # the third round in two halves
    _, (base, rung1, rung2) = run_rounds(times, 3, SettlingBackend(times, {1: (2,), 2: (1, 2, 3)}))
    assert "warmup_settled_s" not in base.notes
    assert rung1.notes["warmup_settled_s"] == 0.3  # settled in its second round only
    assert [v.get("warmup_settled_s") for v in rung1.notes["rounds"]] == [None, 0.3, None, None]
    assert rung2.notes["warmup_settled_s"] == 0.3
    record = RunRecord("compare", "gpu", {"rounds": 3}, {}, [base, rung1, rung2])
    line = next(l for l in footer_lines(record) if l.startswith("Warm-up went on"))
    assert line.startswith("Warm-up went on to 0.3 s for 2 of 3 timed GPU rows")
    record.results[:] = [base]
    assert not any(l.startswith("Warm-up went on") for l in footer_lines(record))
