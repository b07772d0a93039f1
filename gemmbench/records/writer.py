"""Saving a RunRecord while it grows, so that nothing partial is ever visible
and a crash loses nothing.

For a record ``NAME.json`` in the results directory:

- ``NAME.json`` is a snapshot of the whole record, always written to a
  temporary name in the same directory and renamed over the old one, so every
  ``*.json`` there is complete JSON at any instant. Snapshots are taken after
  events 1, 2, 4, 8, ... (an event is a row added or updated) and at the end:
  the bytes written stay within a small multiple of the final size.
- ``.NAME.journal`` (hidden, not ``*.json``) gets one appended line per event,
  the row's JSON text, serialised once and reused by every snapshot. The
  writing process holds an flock on it; a journal nobody holds is an orphan of
  a killed run and ``recover_orphans`` turns it into ``NAME.json`` marked
  incomplete.

Nothing is created before the first row: a run that ends earlier leaves
nothing behind.

A save that fails for want of space (ENOSPC, EDQUOT) never leaves a record
that blames a crash: the journal is renamed ``.NAME.disk-full.journal`` at
once (a rename needs no free space), the final snapshot is still tried (it
says why the run stopped), and a journal so marked is recovered as
``DISK_FULL``, not ``RECOVERED``. Until then the snapshot's RUNNING reason
names all three causes a record can stay in progress for.
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import stat
from pathlib import Path

from .. import fsutil
from ..fsutil import remove_stale_temps, write_atomic
from .results import KernelResult, RunRecord, strict_json

JOURNAL_SUFFIX = ".journal"
DISK_FULL_MARK = ".disk-full"  # .NAME.disk-full.journal: its run stopped when the disk filled up
RUNNING = ("in progress (a record that stays so did not finish: its run was killed or crashed, or its disk "
           "filled up; a later run in this directory recovers the rows from its journal and says which)")
RECOVERED = "the run was killed or crashed; recovered from its journal"
DISK_FULL = "the disk filled up while the run saved this record; recovered from its journal"
NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


class SaveError(Exception):
    """The record could not be written (read-only directory, full disk...).

    ``path`` names the file or directory, ``cause`` is the OSError."""

    def __init__(self, path: Path, cause: OSError):
        problem = "the disk is full (no space left on device)" if cause.errno in NO_SPACE else \
            cause.strerror or cause
        super().__init__(f"could not save {path}: {problem} (make room, or choose another --results-dir)")
        self.path, self.cause = path, cause


def _record_text(head: dict, rows: list[str]) -> str:
    """The record's JSON from its head and the rows' ready-made texts, one row per line."""
    text = strict_json(head, indent=1)
    return text[:-2] + ',\n "results": [\n' + ",\n".join(rows) + "\n ]\n}\n"


class RecordWriter:
    """Keeps ``record`` saved in ``directory`` as rows are added to it."""

    def __init__(self, record: RunRecord, directory: Path):
        self.record = record
        self.directory = Path(directory)
        self.path: Path | None = None  # NAME.json, chosen at the first row
        self.bytes_written = 0  # snapshots and journal together (tests check it stays linear)
        self._rows: list[str] = []
        self._row_of: dict[int, int] = {}  # id(result) -> index in _rows
        self._journal: int | None = None  # fd
        self._events = 0
        self._disk_full = False  # the journal was renamed with DISK_FULL_MARK

    @property
    def journal_path(self) -> Path | None:
        mark = DISK_FULL_MARK if self._disk_full else ""
        return self.path and self.path.with_name(f".{self.path.stem}{mark}{JOURNAL_SUFFIX}")

    def _failed(self, exc: OSError) -> SaveError:
        """The error to raise; a full disk marks the journal first, so that
        whatever stays on disk says the disk was full, not that the run crashed."""
        if exc.errno in NO_SPACE and self._journal is not None and not self._disk_full:
            plain = self.journal_path
            self._disk_full = True
            try:
                os.rename(plain, self.journal_path)
            except OSError:
                self._disk_full = False
        return SaveError(self.path or self.directory, exc)

    def add(self, result: KernelResult) -> None:
        """Save a result that was just appended to the record."""
        self._row_of[id(result)] = len(self._rows)
        self._rows.append("")
        self.update(result)

    def update(self, result: KernelResult) -> None:
        """Save a result again after its flags or notes changed."""
        index = self._row_of[id(result)]
        self._rows[index] = strict_json(self.record.row_dict(result))
        self._events += 1
        try:
            if self._journal is None:
                self._start()
            else:
                self._append(index)
            if self._events & (self._events - 1) == 0:  # a power of two
                self._snapshot()
        except OSError as exc:
            raise self._failed(exc) from None
        except fsutil.TargetError as exc:  # something put at the record's name meanwhile: left alone
            raise SaveError(self.path or self.directory, OSError(errno.EEXIST, str(exc))) from None

    def finish(self) -> None:
        """The final snapshot (the record says by now whether it is complete),
        then the journal goes. Without a row, nothing was ever written and
        nothing is. A failed final write keeps the journal, so a later run can
        still recover every row."""
        if self._journal is None:
            return
        try:
            self._snapshot(final=True)
        except OSError as exc:
            raise self._failed(exc) from None
        except fsutil.TargetError as exc:
            raise SaveError(self.path, OSError(errno.EEXIST, str(exc))) from None
        finally:
            self.close()
        try:
            os.unlink(self.journal_path)
        except OSError:
            pass  # an orphan journal of a finished record recovers to the same rows

    def close(self) -> None:
        """Release the journal (left in place, to be recovered if no finish follows)."""
        if self._journal is not None:
            os.close(self._journal)
            self._journal = None

    # ---- internals -------------------------------------------------------

    def _start(self) -> None:
        """Reserve a name no run used (the journal is the reservation, made
        with O_EXCL), write the journal's head line and first row."""
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        base = f"{self.record.command}-{self.record.device}-{stamp}"
        for n in range(1000):
            path = self.directory / f"{base}{f'-{n}' if n else ''}.json"
            if os.path.lexists(path):  # a dangling symlink too: never written through
                continue
            self.path = path
            try:
                fd = os.open(self.journal_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o666)
            except FileExistsError:
                continue
            break
        else:
            raise FileExistsError(17, "no free record name", str(self.directory / base))
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._journal = fd
        head = strict_json({"journal": 1, "head": self._head(final=False)})
        self._write(head + "\n" + self._journal_line(0))

    def _journal_line(self, index: int) -> str:
        return f'{{"row": {index}, "result": {self._rows[index]}}}\n'

    def _append(self, index: int) -> None:
        self._write(self._journal_line(index))

    def _write(self, text: str) -> None:
        data = text.encode()
        view = memoryview(data)
        while view:  # one write call per line in practice; loop on short writes
            view = view[os.write(self._journal, view):]
        self.bytes_written += len(data)

    def _head(self, final: bool) -> dict:
        """The record's head; until the final snapshot it says the run is in progress."""
        head = self.record.head()
        return head if final else {**head, "complete": False, "incomplete_reason": RUNNING}

    def _snapshot(self, final: bool = False) -> None:
        rows = self._rows
        if final:  # in the record's own order (rows from several GPUs are sorted at the end)
            rows = [self._rows[self._row_of[id(r)]] for r in self.record.results if id(r) in self._row_of]
        self.bytes_written += write_atomic(self.path, _record_text(self._head(final), rows), False)


def recover_orphans(directory: Path) -> list[Path]:
    """Turn every journal in ``directory`` that no live run holds into its
    record, marked incomplete; returns the records written. A journal whose
    head cannot be read is moved aside (``.bad``), never deleted; temporary
    files of dead writers are removed."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    remove_stale_temps(directory)  # snapshots cut short by a kill
    recovered = []
    for journal in sorted(directory.glob(f".*{JOURNAL_SUFFIX}")):
        try:  # never blocks on a FIFO, never follows a link out of the directory
            fd = os.open(journal, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > fsutil.RECORD_MAX_BYTES:
                continue  # not a journal gemmbench wrote: left as it is
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a running gemmbench is writing it
            with os.fdopen(os.dup(fd), "rb") as f:
                lines = f.read(fsutil.RECORD_MAX_BYTES).decode(errors="replace").splitlines()
            stem = journal.name[1:-len(JOURNAL_SUFFIX)]
            disk_full = stem.endswith(DISK_FULL_MARK)
            target = directory / f"{stem[:-len(DISK_FULL_MARK)] if disk_full else stem}.json"
            text = _recovered_text(lines, DISK_FULL if disk_full else RECOVERED)
            if text is None:
                os.replace(journal, journal.with_name(journal.name + ".bad"))
                continue
            if text:
                write_atomic(target, text, False)  # no symlink followed
                recovered.append(target)
            os.unlink(journal)
        except (OSError, fsutil.TargetError):
            continue  # recovering is best effort: the journal stays for a later try
        finally:
            os.close(fd)
    return recovered


def _recovered_text(lines: list[str], reason: str = RECOVERED) -> str | None:
    """The record a journal holds ('' if it has no rows, None if unreadable).
    A last line cut short by the kill is left out; a later line for the same
    row (an update) replaces the earlier."""
    try:
        head = fsutil.loads_json(lines[0])["head"]
    except (IndexError, ValueError, KeyError, TypeError):
        return None
    rows: dict[int, str] = {}
    for line in lines[1:]:
        try:
            entry = fsutil.loads_json(line)
            rows[int(entry["row"])] = json.dumps(entry["result"])
        except (ValueError, KeyError, TypeError):
            continue
    if not rows:
        return ""
    head.update(complete=False, incomplete_reason=reason)
    return _record_text(head, [rows[i] for i in sorted(rows)])
