"""Running a plan: in this process (local), a user's kernel in a worker of
its own (isolated), one worker per GPU (gpus), and the recording that owns
signals and the record from a command's first instruction to its last byte."""
