"""``python -m gemmbench`` and the ``gemmbench`` command.

Signals are taken over at the first instruction, before the heavy imports:
a SIGINT or SIGTERM at any moment of a command ends it with one line (or,
once the run is under way, with what finished saved), never a traceback.
They are unblocked right after the handlers are in place, so one that came
while a parent held them blocked across exec is delivered to them. The
handlers stay to the end: the process is exiting.
"""

import signal
import sys


def main() -> int:
    from .execute.interrupts import SIGNALS, Interrupted, Interrupts
    interrupts = Interrupts().__enter__()
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
        from .cli import main as cli_main
        code = cli_main(interrupts=interrupts)
    except Interrupted as exc:  # during the imports: nothing has happened yet
        sys.stderr.write(f"gemmbench: interrupted by {exc.name}\n")
        code = exc.exit_code
    interrupts.hold()
    return code


if __name__ == "__main__":
    sys.exit(main())
