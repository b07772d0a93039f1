"""Which shapes change their rung-R params when half._WS_TILES rates change. usage: changed.py R r192 r128 r64 [all]"""
import sys, csv, glob
import gemmbench.rungs.half as H
from gemmbench.rungs import get_spec
R = int(sys.argv[1]); r192, r128, r64 = map(float, sys.argv[2:5])
shapes = []
for f in sorted(glob.glob("benchmarks/shapes/*.csv")):
    for row in csv.reader(open(f)):
        try:
            t = tuple(int(x) for x in row[:3])
            if len(t) == 3: shapes.append(t)
        except ValueError: pass
shapes += [(s, s, s) for s in range(256, 8193, 256)]
shapes = list(dict.fromkeys(shapes))
spec = get_spec("gpu", R).for_device((9, 0))
old = {s: spec.params_for(*s, 132) for s in shapes}
H._WS_TILES = ((128, 256, 1.0, 4), (192, 128, r192, 4), (128, 128, r128, 6), (64, 128, r64, 8))
out = []
for s in shapes:
    p = spec.params_for(*s, 132)
    if p != old[s]:
        d = {k: (old[s].get(k), p.get(k)) for k in set(p) | set(old[s]) if p.get(k) != old[s].get(k)}
        out.append((s, d))
print(len(out), "of", len(shapes))
if len(sys.argv) > 5:
    for s, d in out: print("x".join(map(str, s)), d)
