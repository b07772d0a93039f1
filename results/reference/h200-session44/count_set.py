"""Issue 18's counts from `sizes --shapes` text tables (several files: a run cut off and its rest).
usage: count_set.py 17|18 FILE... ; columns as printed: 17: SGEMM, cuBLAS TF32, rung 17; 18: SGEMM, rung 18."""
import re, sys, statistics

def read(paths):
    rows = {}
    for path in paths:
        for line in open(path):
            m = re.match(r"\s+(\d+)x(\d+)x(\d+)\b", line)
            if not m: continue
            cells = re.split(r"\s{2,}", line.strip())
            vals = [float(re.search(r"[\d,]+(?:\.\d+)?", c).group().replace(",", "")) for c in cells[1:]]
            rows.setdefault(tuple(map(int, m.groups())), vals)
    return rows

rung, paths = sys.argv[1], sys.argv[2:]
rows = read(paths)
print(len(rows), "shapes")
fmt = lambda d: ", ".join(f"{'x'.join(map(str, k))} {v:.3f}" for k, v in sorted(d.items(), key=lambda kv: kv[1]))
if rung == "17":
    r = {k: v[2] / v[1] for k, v in rows.items()}
    print("rung 17 / cuBLAS TF32 >= 0.95:", sum(x >= 0.95 for x in r.values()), "of", len(r), "; median", round(statistics.median(r.values()), 3))
    print("short:", fmt({k: x for k, x in r.items() if x < 0.95}))
else:
    r = {k: v[1] / v[0] for k, v in rows.items()}
    big = [k for k in rows if min(k) >= 512]
    print("rung 18 / SGEMM >= 1.0:", sum(x >= 1.0 for x in r.values()), "of", len(r), "; every dim >= 512:",
          sum(r[k] >= 1.0 for k in big), "of", len(big), "; median", round(statistics.median(r.values()), 3))
    print("short of 1.0:", fmt({k: x for k, x in r.items() if x < 1.0}))
    print("4096^3", round(r.get((4096,)*3, 0), 3), "8192^3", round(r.get((8192,)*3, 0), 3))
