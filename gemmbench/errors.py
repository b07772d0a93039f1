"""The one exception type for faults of the user's environment."""


class SetupError(Exception):
    """The user's input or environment cannot serve the command (a cache
    directory, a C compiler, ...). The message is one line naming the value
    and what to do; the CLI prints it as ``gemmbench: error: ...`` and exits 2,
    before the first kernel runs where it can."""
