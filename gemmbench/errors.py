"""The one error a user can fix: bad input or a missing prerequisite.

Raised anywhere below the CLI with a one-line message that names the value
and what to do; the CLI prints it as ``gemmbench: error: ...`` and exits 2.
A kernel's own failure is never one of these: it is a FAIL row.
"""


class UserError(Exception):
    """Bad input or environment: one line, exit code 2."""

    exit_code = 2
