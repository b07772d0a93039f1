"""Shape files: the M,N,K triples that ``gemmbench sizes --shapes`` sweeps.

A shape file is CSV text (UTF-8), one shape a line, under a header that
names its columns::

    # '#' starts a comment, to the end of its line; blank lines are skipped
    M,N,K,name,group
    4096,4096,4096,square-4096,squares
    801,1537,3001                   # name and group may be left out

The header comes first (after comments): M, N and K, and optionally ``name``
and ``group``, in any order, each once (case does not matter). A field may be
quoted as CSV quotes it (a name with a comma); a name or group has at most
MAX_LABEL_CHARS printable characters and no '#'. M, N and K are integers in
ASCII digits within the range -m, -n and -k take (gemmbench.options.RANGES).

``--shapes`` takes files and folders (a folder: its ``*.csv`` files in name
order), repeatable; the shapes run in the order given. A file lists each
shape once (a repeat is an error, naming both lines); a shape that two files
both list is measured once, under the first one's name, and a note says so.
Every problem is one line naming the file, the line and the value
(ShapeFileError, exit 2) before anything runs. Files are read through
gemmbench.fsutil's reader: regular files of at most SHAPE_FILE_MAX_BYTES.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from . import fsutil
from .backend import Shape
from .errors import UserError
from .options import NamedShape, bounds
from .output.text import cut
from .sweep import MAX_SIZES
from .validate import parse_int

SHAPE_FILE_MAX_BYTES = 1 << 20  # the shipped files are a few KiB each
MAX_SHAPES = MAX_SIZES  # as many shapes as a --sweep may name
MAX_LABEL_CHARS = 64
COLUMNS = ("M", "N", "K", "name", "group")
_HEADER_HELP = "the header M,N,K (optionally name and group)"


class ShapeFileError(UserError):
    """A shape file that cannot be read as one: the message names file:line and the value."""


@dataclass(frozen=True)
class ShapeSet:
    """The shapes of one or more files, in order and each once; ``notes``:
    shapes two files both listed (measured once), one line each."""

    shapes: tuple[NamedShape, ...]
    notes: tuple[str, ...] = ()


def _shown(text: str, limit: int = 24) -> str:
    """A value as a message quotes it: cut when long (the error line escapes control characters)."""
    return repr(cut(text, limit))


def shape_files(paths: Iterable) -> list[Path]:
    """The files ``--shapes`` names: each file, and each folder's ``*.csv``
    files in name order (not its subfolders or hidden files); a file given
    twice (itself and in its folder) is read once."""
    files, seen = [], set()
    for given in paths:
        text = str(given)
        if not text.strip():
            raise ShapeFileError("--shapes '': give a shape file or a folder of them")
        path = Path(text)
        try:
            found = sorted(p for p in path.iterdir() if p.suffix == ".csv" and not p.name.startswith(".")) \
                if path.is_dir() else [path]
        except OSError as exc:
            raise ShapeFileError(f"{path}: cannot list the folder ({exc.strerror or exc})") from None
        if not found:
            raise ShapeFileError(f"{path}: a folder with no .csv shape files in it")
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                files.append(file)
    return files


def read_shapes(paths: Iterable) -> ShapeSet:
    """The shape set of files and folders (see the module doc); ShapeFileError otherwise."""
    first: dict[Shape, tuple[NamedShape, str]] = {}
    notes = []
    files = shape_files(paths)
    if not files:
        raise ShapeFileError("--shapes: no shape file given")
    for path in files:
        for entry, where in read_shape_file(path):
            if entry.shape in first:
                kept, there = first[entry.shape]
                notes.append(f"{where}: {entry.shape} is also {there}: measured once"
                             + (f", as {kept.name!r}" if kept.name else ""))
                continue
            first[entry.shape] = entry, where
            if len(first) > MAX_SHAPES:
                raise ShapeFileError(f"{where}: more than {MAX_SHAPES} shapes in {', '.join(map(str, files))}; "
                                     "a sweep takes at most that many: split the set")
    return ShapeSet(tuple(entry for entry, _ in first.values()), tuple(notes))


def read_shape_file(path) -> list[tuple[NamedShape, str]]:
    """The shapes of one file, each with where it is ("file:line")."""
    text = fsutil.read_text(path, SHAPE_FILE_MAX_BYTES)
    columns = None
    shapes: list[tuple[NamedShape, str]] = []
    lines: dict[Shape, int] = {}
    for number, line in enumerate(text.removeprefix("\ufeff").split("\n"), 1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        where = f"{path}:{number}"
        fields = _fields(content, where)
        if columns is None:
            columns = _header(fields, where)
            continue
        entry = _shape_line(fields, columns, where)
        if entry.shape in lines:
            raise ShapeFileError(f"{where}: {entry.shape} is already on line {lines[entry.shape]}: "
                                 "a file lists each shape once")
        lines[entry.shape] = number
        shapes.append((entry, where))
    if not shapes:
        what = "only a header" if columns else "nothing but comments and blank lines" if text.strip() else "empty"
        raise ShapeFileError(f"{path}: no shapes ({what}): give {_HEADER_HELP}, then one line per shape")
    return shapes


def _fields(content: str, where: str) -> list[str]:
    try:
        return [field.strip() for field in next(csv.reader([content], skipinitialspace=True, strict=True))]
    except csv.Error as exc:
        raise ShapeFileError(f"{where}: not a line of CSV ({exc}): {_shown(content)}") from None


def _header(fields: list[str], where: str) -> tuple[str, ...]:
    """The columns the header names, as COLUMNS spells them."""
    canonical = {c.lower(): c for c in COLUMNS}
    columns = []
    for field in fields:
        column = canonical.get(field.lower())
        if column is None:
            hint = " (the first line that is not a comment is the header)" if field.isdigit() else ""
            raise ShapeFileError(f"{where}: {_shown(field)} is not a column: give {_HEADER_HELP}{hint}")
        if column in columns:
            raise ShapeFileError(f"{where}: the header names {column} twice")
        columns.append(column)
    missing = [c for c in "MNK" if c not in columns]
    if missing:
        raise ShapeFileError(f"{where}: the header has no {' or '.join(missing)} column: give {_HEADER_HELP}")
    return tuple(columns)


def _shape_line(fields: list[str], columns: tuple[str, ...], where: str) -> NamedShape:
    if len(fields) > len(columns):
        raise ShapeFileError(f"{where}: {len(fields)} fields, but the header has {len(columns)} columns "
                             f"({','.join(columns)}): {_shown(','.join(fields), 40)}")
    values = dict(zip(columns, fields))
    dims = {dim: _dimension(dim, values.get(dim, ""), where) for dim in "MNK"}
    name, group = (_label(what, values.get(what, ""), where) for what in ("name", "group"))
    return NamedShape(Shape(dims["M"], dims["N"], dims["K"]), name, group)


def _dimension(dim: str, text: str, where: str) -> int:
    low, high = bounds(dim.lower())
    if not text:
        raise ShapeFileError(f"{where}: no {dim} (each line gives M, N and K)")
    out_of_range = f"is out of range: give {low} to {high}"
    try:
        value = parse_int(text)
    except ValueError:
        digits = text.lstrip("+-")
        what = out_of_range if digits.isascii() and digits.isdigit() else "is not an integer (ASCII digits 0-9)"
        raise ShapeFileError(f"{where}: {dim} {_shown(text)} {what}") from None
    if not low <= value <= high:
        raise ShapeFileError(f"{where}: {dim} {value} {out_of_range}")
    return value


def _label(what: str, text: str, where: str) -> str | None:
    if not text:
        return None
    if len(text) > MAX_LABEL_CHARS:
        raise ShapeFileError(f"{where}: the {what} {_shown(text)} has {len(text)} characters; "
                             f"at most {MAX_LABEL_CHARS}")
    if not text.isprintable():
        raise ShapeFileError(f"{where}: the {what} {_shown(text)} has a control character")
    return text
