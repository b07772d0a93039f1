"""Scratch: PTX of a rung at params from two cuda_src trees, written to /tmp/ptx_{old,new}.ptx (no -lineinfo)."""
import sys, subprocess, os
from pathlib import Path
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
old, new = Path(sys.argv[1]), Path(sys.argv[2]); arg = sys.argv[3]
rung, _, kv = arg.partition(":")
spec = get_spec("gpu", int(rung))
p = dict(spec.params); p.update({k: int(v) for k, _, v in (x.partition("=") for x in filter(None, kv.split(",")))})
opts = [o for o in c.nvcc_options(spec, p) if o != "-lineinfo"]; arch, code = c.target_for(spec, (9, 0))
for tag, tree in (("old", old), ("new", new)):
    real = c.source_dir
    c.source_dir = lambda name: tree if name == "cuda_src" else real(name)
    try: src = c.expand_source(spec)
    finally: c.source_dir = real
    f = f"/tmp/ptx_{tag}.cu"; open(f, "w").write(src)
    subprocess.run(["nvcc", "-ptx", "-arch", arch, *opts, "-o", f"/tmp/ptx_{tag}.ptx", f], check=True)
