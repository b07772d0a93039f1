"""Scratch: ptxas -v of rung 18 (sm_90a) at given params, main's cuda_src against another tree's.
usage: regs_ab.py OTHER_CUDA_SRC 18:k=v,..."""
import sys, subprocess, tempfile, os
from pathlib import Path
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
other = Path(sys.argv[1])
def ptxas(src, opts, arch, code):
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "k.cu"); open(f, "w").write(src)
        r = subprocess.run(c.build_command("nvcc", tuple(opts) + ("-Xptxas", "-v"), arch, code, f, os.path.join(d, "k.cubin")), capture_output=True, text=True)
        ptx = subprocess.run(["nvcc", "-ptx", "-arch", arch, *opts, f, "-o", os.path.join(d, "k.ptx")], capture_output=True, text=True)
        text = open(os.path.join(d, "k.ptx")).read() if ptx.returncode == 0 else ""
    lines = [l.strip() for l in r.stderr.splitlines() if ("Used" in l and "sgemm" not in l) or "spill" in l]
    return " / ".join(lines)[:400], text
for arg in sys.argv[2:]:
    rung, _, kv = arg.partition(":")
    spec = get_spec("gpu", int(rung))
    p = dict(spec.params); p.update({k: int(v) for k, _, v in (x.partition("=") for x in filter(None, kv.split(",")))})
    opts = c.nvcc_options(spec, p); arch, code = c.target_for(spec, (9, 0))
    main_src = c.expand_source(spec)
    real = c.source_dir
    c.source_dir = lambda name: other if name == "cuda_src" else real(name)
    try:
        other_src = c.expand_source(spec)
    finally:
        c.source_dir = real
    for tag, src in (("main", main_src), ("other", other_src)):
        info, ptx = ptxas(src, opts, arch, code)
        counts = {k: ptx.count(k) for k in ("vote.sync", "shfl.sync", "bar.warp.sync", "bra.uni", "@%p")}
        print(arg, tag, "|", info, "|", counts)
