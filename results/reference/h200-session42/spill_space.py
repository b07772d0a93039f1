"""Scratch: ptxas spills (sm_90a) of rung 18 over the register-relevant part of its search space, for a cuda_src tree.
usage: spill_space.py [TREE]"""
import sys, os, subprocess, tempfile, dataclasses, itertools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
spec = get_spec("gpu", 18)
tree = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None
real = c.source_dir
if tree: c.source_dir = lambda name: tree if name == "cuda_src" else real(name)
jobs = []
for bm, bn, bk, fl, sp, sw in itertools.product((16, 32, 64, 128), (64, 128), (16, 32), (1, 2, 4), (1, 2), (0, 1)):
    p = {**spec.params, "BM": bm, "BN": bn, "BK": bk, "FLUSH": fl, "SPLITS": sp, "SWAP_AB": sw}
    if spec.invalid_reason(p) is None:
        jobs.append(p)
def one(p):
    built = dataclasses.replace(spec, params=p)
    arch, code = c.target_for(built, (9, 0))
    src = c.expand_source(built)
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "k.cu"); open(f, "w").write(src)
        r = subprocess.run(c.build_command("nvcc", (*c.nvcc_options(built), "-Xptxas", "-warn-spills"), arch, code, f, os.path.join(d, "k.cubin")), capture_output=True, text=True)
    return p, r.returncode, r.stderr.strip()
bad = 0
with ThreadPoolExecutor(2) as ex:
    for p, rc, err in ex.map(one, jobs):
        if rc or err:
            bad += 1
            print({k: p[k] for k in ("BM", "BN", "BK", "FLUSH", "SPLITS", "SWAP_AB")}, rc, err[:160], flush=True)
print(len(jobs), "builds,", bad, "with a warning or error")
