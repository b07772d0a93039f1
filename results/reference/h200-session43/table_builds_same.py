"""Scratch (session 43): are the cubins of every build a choice table names (each shape's choice and its close
ones) byte-identical between two cuda_src trees, on sm_90a without -lineinfo?
usage: table_builds_same.py RUNG TABLE.json[.gz] OLD_TREE NEW_TREE"""
import sys, os, json, gzip, hashlib, subprocess, tempfile, dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
rung, table, old, new = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3]).resolve(), Path(sys.argv[4]).resolve()
t = json.load(gzip.open(table) if table.endswith(".gz") else open(table))
spec = get_spec("gpu", rung)
sets = []
for ch in t["choices"].values():
    sets.append({**spec.params, **ch["params"]})
    for cl in ch.get("close", []):
        sets.append({**spec.params, **ch["params"], **cl["changed"]})
builds = {}
for p in sets:
    builds.setdefault(tuple(spec.defines(p)), p)
print(f"{len(sets)} parameter sets, {len(builds)} distinct builds", flush=True)
def expand(tree):
    real = c.source_dir
    c.source_dir = lambda name: tree if name == "cuda_src" else real(name)
    try:
        return c.expand_source(spec)
    finally:
        c.source_dir = real
srcs = {"old": expand(old), "new": expand(new)}
print("text same" if srcs["old"] == srcs["new"] else "text differs", flush=True)
arch, code = c.target_for(spec, (9, 0))
def one(key):
    p = builds[key]
    opts = [o for o in c.nvcc_options(spec, p) if o != "-lineinfo"]
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for name, src in srcs.items():
            f = os.path.join(d, name + ".cu"); open(f, "w").write(src)
            o = os.path.join(d, name + ".cubin")
            r = subprocess.run(c.build_command("nvcc", tuple(opts), arch, code, f, o), capture_output=True, text=True)
            out[name] = hashlib.sha256(open(o, "rb").read()).hexdigest()[:16] if r.returncode == 0 else "ERR " + r.stderr[:200]
    return key, out
same = 0
with ThreadPoolExecutor(2) as ex:
    for key, out in ex.map(one, builds):
        ok = out["old"] == out["new"] and not out["old"].startswith("ERR")
        same += ok
        print("SAME" if ok else "DIFFERENT", out["old"], out["new"], " ".join(key), flush=True)
print(f"{same} of {len(builds)} builds byte-identical", flush=True)
