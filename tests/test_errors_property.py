"""A property of option parsing: whatever numbers (or text) a user types for
the numeric options, the CLI either accepts them or refuses them in one line
with exit 2 -- never a traceback, never a hang. Kernels never run: execute
stops after its checks."""

import pytest

from gemmbench import cli, commands
from gemmbench.execute.recording import Outcome
from gemmbench.records.results import RunRecord

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

NUMERIC_OPTIONS = ["--warmup", "--budget", "--seed", "--threads", "--min-samples", "--max-samples",
                   "--max-noise", "--min-time", "--noise-timeout", "-m", "-n", "-k", "-i"]
VALUES = st.one_of(
    st.integers(-2 ** 70, 2 ** 70).map(str),
    st.integers(0, 5000).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(0, 100).map(str),
    st.text(max_size=12),
)


def _checks_only(plan, devices, options, results_dir, reporter, interrupts=None, worker=None, carried=()):
    """record_run stopped after its checks: no kernel, no allocation."""
    devices.check(plan.shapes, results_dir)
    return Outcome(RunRecord(plan.command, plan.device, options, {}), None, 0)


@settings(max_examples=200, deadline=5000, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(NUMERIC_OPTIONS), VALUES, max_size=5))
def test_numeric_options_accept_or_refuse_in_one_line(capsys, options):
    args = ["run", "--device", "cpu", "--no-save"] + [x for pair in options.items() for x in pair]
    if "-i" not in options:
        args += ["-i", "1"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(commands, "record_run", _checks_only)
        code = cli.main(args)
    out, err = capsys.readouterr()
    assert code in (0, 2), (args, code, err)
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("gemmbench: error: ") and err.count("\n") == 1, (args, err)
