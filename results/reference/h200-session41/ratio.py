"""Scratch: a rung against its cuBLAS baseline per shape from a sizes record (flags kept).
usage: ratio.py RECORD RUNG PRECISION BASELINE_PRECISION [N]"""
import sys
from gemmbench.records.store import load
rec = load(sys.argv[1]).record
rung, prec, base = int(sys.argv[2]), sys.argv[3], sys.argv[4]
by = {}
for x in rec.results:
    by.setdefault(x.shape, {})[x.kernel_id if x.kernel_id != 0 else (0, x.precision)] = x
out = []
for shape, d in by.items():
    a, b = d.get(rung), d.get((0, base))
    if a is None or b is None:
        continue
    flags = ",".join(sorted(set(getattr(a, "flags", ()) or ()) | set(getattr(b, "flags", ()) or ())))
    out.append((a.gflops / b.gflops, shape, flags))
out.sort(key=lambda t: t[0])
big = [o for o in out if min(o[1].M, o[1].N, o[1].K) >= 512]
print(f"{len(out)} shapes; {sum(r >= 0.95 for r, *_ in out)} at >= 0.95x, {sum(r >= 1.0 for r, *_ in out)} at >= 1.0x; "
      f"every dim >= 512: {sum(r >= 1.0 for r, *_ in big)} of {len(big)} at >= 1.0x, lowest {min((r for r, *_ in big), default=0):.3f}")
for r, s, f in out[: int(sys.argv[5]) if len(sys.argv) > 5 else 12]:
    print(f"{str(s):>20} {r:6.3f} {f}")
