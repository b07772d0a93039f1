"""ratios.py RECORD RUNG LIBRARY_PRECISION. Per shape of a sizes record: rung R's speed over its library row's (library median time / rung median time),
the shapes where every dimension is >= 128 marked; counts at the issue's bars."""
import json, sys
rec = json.load(open(sys.argv[1])); rung = int(sys.argv[2]); library = sys.argv[3]  # the library row's precision
lib, mine, flags = {}, {}, {}
for r in rec["results"]:
    key = (r["shape"]["M"], r["shape"]["N"], r["shape"]["K"])
    if r["status"] != "pass":
        print("not pass:", r["kernel_id"], key, r["status"], r.get("reason")); continue
    if r["kernel_id"] == 0 and r["precision"] == library:
        lib[key] = r["stats"]["median"]
    elif r["kernel_id"] == rung:
        mine[key] = r["stats"]["median"]
    if r["kernel_id"] == rung: flags[key] = r["flags"]
ratio = {k: lib[k] / mine[k] for k in mine if k in lib}
big = {k: v for k, v in ratio.items() if min(k) >= 128}
vals = sorted(ratio.values())
print(f"shapes {len(ratio)}; >=0.95x {sum(v >= 0.95 for v in vals)}; >=0.90x {sum(v >= 0.90 for v in vals)}; "
      f"median {vals[len(vals)//2]:.3f}; every dim >=128: {len(big)} shapes, >=0.90x {sum(v >= 0.9 for v in big.values())}, >=0.95x {sum(v >= 0.95 for v in big.values())}")
for k, v in sorted(ratio.items(), key=lambda kv: kv[1]):
    if v < 0.95: print(f"  {k[0]}x{k[1]}x{k[2]} {v:.3f} {' '.join(flags.get(k, []))}")
