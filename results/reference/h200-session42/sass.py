"""Scratch (session 42): SASS of a rung at a shape's table parameters from several cuda_src trees: opcode counts,
the whole listing to $D. usage: sass.py RUNG SHAPE NAME=TREE ..."""
import os, sys, re, json, subprocess, tempfile, dataclasses
from collections import Counter
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
rung, key = int(sys.argv[1]), sys.argv[2]
spec0 = get_spec("gpu", rung).for_device((9, 0))
table = json.load(open(f"gemmbench/rungs/{ {17: 'tf32_tma_ws_h200.json', 18: '3xtf32_tma_ws_h200.json'}[rung] }"))["choices"]
p = {**spec0.params, **table[key]["params"]} if key in table else dict(spec0.params)
print(rung, key, p)
for name, tree in (a.split("=", 1) for a in sys.argv[3:]):
    sp = spec0 if tree == "." else dataclasses.replace(spec0, source=os.path.abspath(os.path.join(tree, os.path.basename(spec0.source))))
    b = c.cubin(sp, (9, 0), p); f = tempfile.mktemp(suffix=".cubin"); open(f, "wb").write(b)
    out = subprocess.run(["cuobjdump", "-sass", "-fun", "sgemm", f], capture_output=True, text=True).stdout
    ops = re.findall(r'^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)', out, re.M)
    cn = Counter(o.split('.')[0] for o in ops)
    print(f"{name:7s}", {k: cn.get(k, 0) for k in ('HGMMA', 'FADD', 'FSETP', 'LDS', 'LDG', 'FFMA', 'STG', 'BRA', 'VOTE', 'WARPSYNC', 'BSSY', 'BSYNC', 'SHFL')},
          "total", len(ops), flush=True)
    open(f"{os.environ['D']}/sass-r{rung}-{key}-{name}.sass", "w").write(out)
