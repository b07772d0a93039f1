"""Scratch: rung 17 against cuBLAS TF32 per shape from a sizes record (flags kept)."""
import sys
from gemmbench.records.store import load
rec = load(sys.argv[1]).record
by = {}
for x in rec.results:
    by.setdefault(x.shape, {})[x.kernel_id if x.kernel_id != 0 else (0, x.precision)] = x
out = []
for shape, d in by.items():
    a, b = d.get(17), d.get((0, "tf32"))
    if a is None or b is None:
        continue
    flags = ",".join(sorted(set(getattr(a, "flags", ()) or ()) | set(getattr(b, "flags", ()) or ())))
    out.append((b.seconds / a.seconds if hasattr(a, "seconds") else a.gflops / b.gflops, shape, flags))
out.sort(key=lambda t: t[0])
print(f"{sum(r >= 0.95 for r, *_ in out)} of {len(out)} at >= 0.95x")
for r, s, f in out[: int(sys.argv[2]) if len(sys.argv) > 2 else 20]:
    print(f"{str(s):>20} {100*r:6.1f}% {f}")
