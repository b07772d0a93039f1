"""Scratch: is the sm_90a cubin of a rung at given params byte-identical between two source trees?
usage: cubin_same.py OLD_CUDA_SRC RUNG[:k=v,...] ..."""
import sys, subprocess, tempfile, os, hashlib, shutil
from pathlib import Path
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
old = Path(sys.argv[1])
def sass_only(path):
    return path
def build(src, opts, arch, code, d, tag):
    f = os.path.join(d, "k.cu"); open(f, "w").write(src)
    out = os.path.join(d, "k.cubin")
    r = subprocess.run(c.build_command("nvcc", tuple(opts), arch, code, f, out), capture_output=True, text=True)
    return hashlib.sha256(open(out, "rb").read()).hexdigest()[:12] if r.returncode == 0 else "ERR " + r.stderr[:200]
for arg in sys.argv[2:]:
    rung, _, kv = arg.partition(":")
    spec = get_spec("gpu", int(rung))
    p = dict(spec.params); p.update({k: int(v) for k, _, v in (x.partition("=") for x in filter(None, kv.split(",")))})
    opts = [o for o in c.nvcc_options(spec, p) if o != os.environ.get("DROP", "")]; arch, code = c.target_for(spec, (9, 0))
    new_src = c.expand_source(spec)
    real = c.source_dir
    c.source_dir = lambda name: old if name == "cuda_src" else real(name)
    try:
        old_src = c.expand_source(spec)
    finally:
        c.source_dir = real
    with tempfile.TemporaryDirectory() as d:
        a, b = build(old_src, opts, arch, code, d, "old"), build(new_src, opts, arch, code, d, "new")
    print(arg, "old", a, "new", b, "SAME" if a == b else "DIFFERENT", "| text same" if old_src == new_src else "| text differs")
