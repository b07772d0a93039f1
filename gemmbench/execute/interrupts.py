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
import sys
import threading


class Interrupted(BaseException):
    """The run was stopped by a signal (a BaseException, as KeyboardInterrupt
    is: no ``except Exception`` around a kernel may swallow it)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.rows = []  # results measured but not yet handed on when it came (an interrupted --rounds shape)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


SIGNALS = (signal.SIGINT, signal.SIGTERM)


def interrupted_cause(exc: BaseException) -> Interrupted | None:
    """The Interrupted behind ``exc``: itself, or one that Python wrapped
    (a signal raised inside ``__set_name__`` comes out as a RuntimeError)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Interrupted):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


class Interrupts:
    """Context manager installing the handlers (only in the main thread), for
    ``signals`` (both, but for a --gpus worker: gemmbench.execute.gpus).

    The first signal is raised once, where the main thread is. Python
    swallows an exception raised inside some callbacks (a weakref's, an
    import lock's): the unraisable hook keeps that quiet, the signal stays
    ``pending``, and the next ``checkpoint()`` raises it again.
    """

    def __init__(self, signals: tuple = SIGNALS):
        self.signals = signals
        self._saved = {}
        self._hook = None
        self._depth = 0
        self._holding = False
        self._raised = False
        self._caught = False
        self.pending: int | None = None

    def __enter__(self) -> "Interrupts":
        if threading.current_thread() is threading.main_thread():
            for signum in self.signals:
                self._saved[signum] = signal.signal(signum, self._handle)
            self._hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        self._saved.clear()
        if self._hook is not None:
            sys.unraisablehook, self._hook = self._hook, None

    def _unraisable(self, unraisable) -> None:
        if not isinstance(unraisable.exc_value, Interrupted):
            self._hook(unraisable)

    def _handle(self, signum, frame) -> None:
        self.pending = self.pending or signum
        if self._depth or self._holding or self._raised:
            return  # raised once: a second signal must not cut short the saving of the first
        self._raised = True
        raise Interrupted(signum)

    def caught(self) -> None:
        """The Interrupted was handled: checkpoint() has nothing to raise again."""
        self._caught = True

    def checkpoint(self) -> None:
        """Raise a signal that came but was not raised, or was swallowed where it was."""
        if self.pending and not self._caught and not self._holding and not self._depth:
            self._raised = self._caught = True
            raise Interrupted(self.pending)

    @contextlib.contextmanager
    def deferred(self):
        """A block no signal cuts short: one arriving inside is raised at its end."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            self.checkpoint()

    def hold(self) -> None:
        """From now on signals are noted, never raised: the run is being finished."""
        self._holding = True
