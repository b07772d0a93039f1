"""Rung 28's speed in this session's shape-set runs against the twenty-second session's, shape by shape, and
split by whether the table's choice changed. Run from the repository root:
python3 results/reference/h200-session23/cmpsess.py"""
import json, statistics, subprocess, sys
sys.path.insert(0, "results/reference/h200-session20")
from parse_set import read_set  # noqa: E402
from gemmbench.rungs import any_shape as a  # noqa: E402
HERE, BEFORE = "results/reference/h200-session23", "results/reference/h200-session22"
old = [read_set(f"{BEFORE}/set-28-run{i}.txt") for i in (1, 2)]
new = [read_set(f"{HERE}/set-28-run{i}.txt") for i in (1, 2)]
def mean(sets, k, col): return statistics.mean(s[k][col][0] for s in sets)
rows = []
for k in old[0]:
    co, cn, ro, rn = mean(old, k, 0), mean(new, k, 0), mean(old, k, 1), mean(new, k, 1)  # cuBLAS, rung 28 GFLOP/s
    rows.append((rn / ro, cn / co, "x".join(map(str, k)), round(ro / co, 3), round(rn / cn, 3)))
print("median cuBLAS new/old", round(statistics.median(r[1] for r in rows), 4),
      " rung 28 new/old", round(statistics.median(r[0] for r in rows), 4))
to = json.loads(subprocess.check_output(["git", "show", "ec1a491:gemmbench/rungs/any_shape_h200.json"]))["choices"]
tn = json.load(open(f"{HERE}/any_shape_h200-mend-sources.json"))["choices"]
same = [r for r in rows if to[r[2]]["params"] == tn[r[2]]["params"]]
print("choice unchanged at", len(same), "shapes: rung 28 new/old median", round(statistics.median(r[0] for r in same), 4))
by = {}
for r in same:
    by.setdefault(a.config_name(tn[r[2]]["params"]), []).append(r[0])
for name, v in by.items():
    print(f"  {name}: {len(v)} shapes, median {statistics.median(v):.4f}")
print("choice changed:", [(r[2], round(r[0], 3)) for r in rows if to[r[2]]["params"] != tn[r[2]]["params"]])
