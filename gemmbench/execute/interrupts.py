"""SIGINT and SIGTERM as an exception the session can finish from.

From a command's first instruction (gemmbench.__main__) both signals raise
``Interrupted`` in the main thread, once: before the run it ends the command
with one line; during it the run saves what it finished, marks the record
incomplete, prints the table and exits with 128 + the signal's number. Inside
``deferred()`` (saving a row) a signal waits until the block ends, so a row
is never half-saved; after the first ``Interrupted`` or ``hold()`` (the run
is being finished) further signals are noted, never raised.
"""

from __future__ import annotations

import contextlib
import signal
import threading


class Interrupted(BaseException):
    """The run was stopped by a signal (a BaseException, as KeyboardInterrupt
    is: no ``except Exception`` around a kernel may swallow it)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupts:
    """Context manager installing the handlers (only in the main thread)."""

    def __init__(self):
        self._saved = {}
        self._depth = 0
        self._holding = False
        self.pending: int | None = None

    def __enter__(self) -> "Interrupts":
        if threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                self._saved[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        self._saved.clear()

    def _handle(self, signum, frame) -> None:
        if self._depth or self._holding:
            self.pending = self.pending or signum
            return
        self._holding = True  # raised once: a second signal must not cut short the saving of the first
        raise Interrupted(signum)

    @contextlib.contextmanager
    def deferred(self):
        """A block no signal cuts short: one arriving inside is raised at its end."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if not self._depth and self.pending and not self._holding:
                signum, self.pending = self.pending, None
                self._holding = True
                raise Interrupted(signum)

    def hold(self) -> None:
        """From now on signals are noted, never raised: the run is being finished."""
        self._holding = True
