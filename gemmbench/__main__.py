"""``python -m gemmbench`` and the ``gemmbench`` command.

Signals are taken over at the first instruction, before the heavy imports:
a SIGINT or SIGTERM at any moment of a command ends it with one line (or,
once the run is under way, with what finished saved), never a traceback.
They are unblocked right after the handlers are in place, so one that came
while a parent held them blocked across exec is delivered to them. Once
the command has finished, both are ignored: the exit code says how it ended.
"""

import signal
import sys


def main() -> int:
    from .execute.interrupts import SIGNALS, Interrupts, interrupted_cause
    interrupts = Interrupts().__enter__()
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
        from .cli import main as cli_main
        interrupts.checkpoint()  # one that came during the imports, where Python may have swallowed it
        code = cli_main(interrupts=interrupts)
    except BaseException as exc:  # during the imports: nothing has happened yet
        stop = interrupted_cause(exc)
        if stop is None:
            raise
        interrupts.caught()
        sys.stderr.write(f"gemmbench: interrupted by {stop.name}\n")
        code = stop.exit_code
    interrupts.hold()
    for signum in SIGNALS:  # finished: Python's shutdown would put back the default, which kills (-15)
        signal.signal(signum, signal.SIG_IGN)
    return code


if __name__ == "__main__":
    sys.exit(main())
