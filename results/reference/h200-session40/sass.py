"""Scratch: SASS of rung 18 (and 15) old (r18old.cu) and new at given params; opcode counts, files to $D."""
import os, sys, re, json, subprocess, tempfile, dataclasses
from collections import Counter
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
here = os.path.dirname(os.path.abspath(__file__))
table = json.load(open("gemmbench/rungs/3xtf32_tma_ws_h200.json"))["choices"]
for rung, key in ((18, "4096x4096x4096"), (18, "127x4096x4096"), (18, "4096x127x4096"), (15, None)):
    new = get_spec("gpu", rung).for_device((9, 0))
    old = dataclasses.replace(new, source=os.path.join(here, f"r{rung}old.cu"))
    p = {**new.params, **table[key]["params"]} if key else dict(new.params)
    for name, sp in (("old", old), ("new", new)):
        b = c.cubin(sp, (9, 0), p); f = tempfile.mktemp(suffix=".cubin"); open(f, "wb").write(b)
        out = subprocess.run(["cuobjdump", "-sass", f], capture_output=True, text=True).stdout
        ops = re.findall(r'^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)', out, re.M)
        cn = Counter(o.split('.')[0] for o in ops)
        print(rung, key, name, {k: cn.get(k, 0) for k in ('HGMMA', 'FADD', 'FSETP', 'LDS', 'LDG', 'FFMA', 'STG', 'BRA')},
              "total", len(ops), flush=True)
        open(f"{os.environ['D']}/r{rung}-{key}-{name}.sass", "w").write(out)
