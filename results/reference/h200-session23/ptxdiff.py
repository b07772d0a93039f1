"""PTX of rung 28's sgemm, from cuda_src and from /tmp/mend/cuda_src, at one configuration: instruction counts."""
import sys, subprocess, tempfile, collections, re, pathlib
from gemmbench.rungs import get_spec, any_shape
from gemmbench.gpu import compile as c
spec = get_spec("gpu", 28).for_device((9, 0))
p = {**any_shape.CONFIGS[sys.argv[1]], "SPLITS": 1, "PACK": 1}
real = c.source_dir
out = {}
for tag, root in (("old", None), ("mend", pathlib.Path("/tmp/mend/cuda_src"))):
    c.source_dir = (lambda kind, r=root: r) if root else real
    src = c.expand_source(spec)
    d = tempfile.mkdtemp(); open(f"{d}/k.cu", "w").write(src)
    opts = [o for o in c.nvcc_options(spec, p)]
    arch, code = c.target_for(spec, (9, 0))
    cmd = c.build_command(c.find_nvcc(), tuple(opts), arch, code, f"{d}/k.cu", f"{d}/k.ptx")
    cmd = [x for x in cmd if x not in ("-cubin",)] + ["-ptx"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode: print(r.stderr[-2000:]); sys.exit(1)
    text = open(f"{d}/k.ptx").read()
    body = text[text.index(".entry sgemm"):]
    ops = collections.Counter(m.group(1) for m in re.finditer(r"^\s+(?:@%p\d+\s+)?([a-z][\w.]*)", body, re.M))
    out[tag] = ops
    print(tag, sum(ops.values()), "PTX instructions in sgemm")
keys = sorted(set(out["old"]) | set(out["mend"]))
for k in keys:
    if out["old"][k] != out["mend"][k]: print(f"  {k:28s} old {out['old'][k]:6d} mend {out['mend'][k]:6d}")
