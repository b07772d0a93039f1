"""Summarise ncu --page source --csv output: per kernel, the SASS lines with the most stall samples."""
import csv, sys, io
text = open(sys.argv[1], errors="replace").read()
# the file holds one CSV block per kernel, each starting with a header line
blocks, cur = [], []
for line in text.splitlines():
    if line.startswith('"Kernel Name"') or line.startswith('Kernel Name') or (line.startswith('"#"') or line.startswith('"Address"')) :
        if cur: blocks.append(cur)
        cur = [line]
    elif cur:
        cur.append(line)
if cur: blocks.append(cur)
print("blocks", len(blocks))
for b in blocks:
    rows = list(csv.reader(io.StringIO("\n".join(b))))
    if len(rows) < 3: print(b[:3]); continue
    hdr = rows[0]
    print("COLUMNS:", hdr[:40])
    def col(name):
        for i, h in enumerate(hdr):
            if h.startswith(name): return i
        return None
    ci = col("Warp Stall Sampling (All"); cs = col("Source"); ca = col("Address")
    cn = col("Warp Stall Sampling (Not")
    if ci is None: print("no samples column"); continue
    data = []
    for r in rows[1:]:
        try: data.append((float(r[ci] or 0), r))
        except (ValueError, IndexError): pass
    tot = sum(d[0] for d in data) or 1
    print(f"total samples {tot:.0f}, instructions {len(data)}")
    # stall reason columns: those starting with 'stall' or containing 'Stall' other than the totals
    for s, r in sorted(data, key=lambda x: -x[0])[:28]:
        extra = []
        for i, h in enumerate(hdr):
            if i in (ci, cn, cs, ca): continue
            if ("stall" in h.lower() or "Samples" in h) and r[i] not in ("", "0"):
                try:
                    v = float(r[i])
                    if v >= 0.05 * s and v > 0: extra.append(f"{h[:28]}={v:.0f}")
                except ValueError: pass
        print(f"{100*s/tot:5.1f}% {r[ca] if ca is not None else ''} {r[cs][:70] if cs is not None else ''} | {' '.join(extra[:6])}")
