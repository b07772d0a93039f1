import re, sys, statistics


def read_set(path):
    """{(M, N, K): [(GFLOP/s, flagged), ...] per column} of a `sizes --shapes` table as printed."""
    rows = {}
    for line in open(path):
        m = re.match(r"\s+(\d+)x(\d+)x(\d+)\b", line)
        if not m: continue
        cells = re.split(r"\s{2,}", line.strip())
        vals = []
        for c in cells[1:]:
            n = re.search(r"[\d,]+(?:\.\d+)?", c)
            vals.append((float(n.group().replace(",", "")), "?" in c or " T" in c or c.endswith("T")))
        rows.setdefault(tuple(map(int, m.groups())), vals)
    return rows


if __name__ == "__main__":
    rows = read_set(sys.argv[1])
    print(len(rows), "shapes")
    def ratio(k, a, b): return rows[k][a][0] / rows[k][b][0]
    # columns: 0 sgemm, 1 cublas tf32, 2 r17, 3 r18, 4 r28
    r28 = {k: ratio(k, 4, 0) for k in rows}
    r17 = {k: ratio(k, 2, 1) for k in rows}
    r18 = {k: ratio(k, 3, 0) for k in rows}
    ceil = {k: ratio(k, 1, 0) / 3 for k in rows}
    big = lambda k: min(k) >= 128
    print("rung28/SGEMM >=0.95:", sum(v >= 0.95 for v in r28.values()), "of", len(r28), "; dims>=128 & <0.90:",
          sorted((round(v, 3), "x".join(map(str, k))) for k, v in r28.items() if big(k) and v < 0.90))
    print("  short of 0.95:", sorted((round(v, 3), "x".join(map(str, k))) for k, v in r28.items() if v < 0.95))
    print("rung17/TF32 >=0.95:", sum(v >= 0.95 for v in r17.values()), "of", len(r17))
    print("  short:", sorted((round(v, 3), "x".join(map(str, k))) for k, v in r17.items() if v < 0.95))
    from_512 = [k for k in rows if min(k) >= 512]
    print("rung18/SGEMM >=1.0:", sum(v >= 1.0 for v in r18.values()), "of", len(r18), "; from 512 up:",
          sum(r18[k] >= 1.0 for k in from_512), "of", len(from_512))
    print("  short:", sorted((round(v, 3), "x".join(map(str, k))) for k, v in r18.items() if v < 1.0))
    for k in [(4096,)*3, (8192,)*3]:
        if k in rows: print(k, "r18", round(r18[k], 3), "ceiling tf32/3", round(ceil[k], 3), "r17", round(r17[k], 3), "r28", round(r28[k], 3), "flags", [f for _, f in rows[k]])
    print("medians", round(statistics.median(r28.values()), 3), round(statistics.median(r17.values()), 3), round(statistics.median(r18.values()), 3))
    print("flagged rows:", sum(any(f for _, f in v) for v in rows.values()))
