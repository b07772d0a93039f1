"""Counts rung 28's bars in `sizes --shapes ... -i 28 --precision fp32` tables as printed (columns: cuBLAS, rung 28).
usage: python3 cmp28.py set-28-run1.txt [set-28-run2.txt ...]"""
import pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "h200-session20"))
from parse_set import read_set  # noqa: E402

big = lambda k: min(k) >= 128
for path in sys.argv[1:]:
    rows = read_set(path)
    r28 = {k: (v[1][0] / v[0][0], v[0][1] or v[1][1]) for k, v in rows.items()}
    print(path, len(r28), "shapes; >=0.95:", sum(v >= 0.95 for v, _ in r28.values()),
          "; every dim >=128 below 0.90:", sorted((round(v, 3), "x".join(map(str, k))) for k, (v, _) in r28.items() if big(k) and v < 0.90),
          "of", sum(big(k) for k in r28), "; flagged:", sum(f for _, f in r28.values()))
    print("  short of 0.95:", sorted((round(v, 3), "x".join(map(str, k))) + (("flagged",) if f else ()) for k, (v, f) in r28.items() if v < 0.95))
    print("  333x555x777:", round(r28[(333, 555, 777)][0], 3), " 2047^3:", round(r28[(2047,) * 3][0], 3),
          " 4096^3:", round(r28[(4096,) * 3][0], 3), " 8192^3:", round(r28[(8192,) * 3][0], 3))
