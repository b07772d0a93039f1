"""Scratch: sizes of the .text sections (SASS bytes per kernel) of a rung's cubin from two cuda_src trees.
usage: text_size.py OLD NEW CC RUNG[:k=v] ..."""
import sys, subprocess, tempfile, os
from pathlib import Path
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
old, new, cc = Path(sys.argv[1]), Path(sys.argv[2]), tuple(int(x) for x in sys.argv[3].split("."))
def sections(path):
    out = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 6 and parts[1].startswith(".text."):
            res[parts[1]] = int(parts[5], 16)
    return res
def expand(spec, tree):
    real = c.source_dir
    c.source_dir = lambda name: tree if name == "cuda_src" else real(name)
    try: return c.expand_source(spec)
    finally: c.source_dir = real
for arg in sys.argv[4:]:
    rung, _, kv = arg.partition(":")
    spec = get_spec("gpu", int(rung))
    p = dict(spec.params); p.update({k: int(v) for k, _, v in (x.partition("=") for x in filter(None, kv.split(",")))})
    opts = [o for o in c.nvcc_options(spec, p) if o != "-lineinfo"]; arch, code = c.target_for(spec, cc)
    res = []
    with tempfile.TemporaryDirectory() as d:
        for tree in (old, new):
            f = os.path.join(d, "k.cu"); open(f, "w").write(expand(spec, tree)); o = os.path.join(d, "k.cubin")
            subprocess.run(c.build_command("nvcc", tuple(opts), arch, code, f, o), check=True, capture_output=True)
            res.append(sections(o))
    print(arg, cc, {k: (res[0].get(k), res[1].get(k)) for k in sorted(set(res[0]) | set(res[1]))}, flush=True)
