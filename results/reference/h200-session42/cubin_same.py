"""Scratch: is the cubin of a rung at given params byte-identical between two cuda_src trees?
usage: cubin_same.py OLD_CUDA_SRC NEW_CUDA_SRC CC RUNG[:k=v,...] ...   (DROP=-lineinfo drops that option)"""
import sys, subprocess, tempfile, os, hashlib
from pathlib import Path
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
old, new, cc = Path(sys.argv[1]), Path(sys.argv[2]), tuple(int(x) for x in sys.argv[3].split("."))
def build(src, opts, arch, code, d):
    f = os.path.join(d, "k.cu"); open(f, "w").write(src)
    out = os.path.join(d, "k.cubin")
    r = subprocess.run(c.build_command("nvcc", tuple(opts), arch, code, f, out), capture_output=True, text=True)
    return hashlib.sha256(open(out, "rb").read()).hexdigest()[:12] if r.returncode == 0 else "ERR " + r.stderr[:300]
def expand(spec, tree):
    real = c.source_dir
    c.source_dir = lambda name: tree if name == "cuda_src" else real(name)
    try:
        return c.expand_source(spec)
    finally:
        c.source_dir = real
for arg in sys.argv[4:]:
    rung, _, kv = arg.partition(":")
    spec = get_spec("gpu", int(rung))
    p = dict(spec.params); p.update({k: int(v) for k, _, v in (x.partition("=") for x in filter(None, kv.split(",")))})
    opts = [o for o in c.nvcc_options(spec, p) if o != os.environ.get("DROP", "")]; arch, code = c.target_for(spec, cc)
    a_src, b_src = expand(spec, old), expand(spec, new)
    with tempfile.TemporaryDirectory() as d:
        a, b = build(a_src, opts, arch, code, d), build(b_src, opts, arch, code, d)
    print(arg, cc, "old", a, "new", b, "SAME" if a == b else "DIFFERENT", "| text same" if a_src == b_src else "| text differs", flush=True)
