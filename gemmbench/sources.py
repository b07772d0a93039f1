"""Where kernel sources live, in a checkout and in an installed wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def source_dir(kind: str) -> Path:
    """The folder holding ``cuda_src`` or ``cpu_src``.

    A checkout (or editable install) keeps them beside the package; a wheel
    installs them inside it (see pyproject's package-dir).
    """
    for candidate in (_PACKAGE.parent / kind, _PACKAGE / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"kernel sources '{kind}' not found next to {_PACKAGE}")
