"""Scratch (session 43): in a tune's record, how many rows had their warm-up extended to SETTLE_SECONDS
(notes.warmup_settled_s) and how much of the tune that accounts for. usage: settle_share.py RECORD.json[.gz]"""
import gzip, json, statistics, sys
f = sys.argv[1]
r = json.load(gzip.open(f) if f.endswith(".gz") else open(f))["results"]
ext = [x for x in r if "warmup_settled_s" in x["notes"]]
timed = sum(sum(x["samples_s"]) * x["notes"].get("calls_per_sample", 1) for x in r)
print(f"{len(r)} rows, {len(ext)} with the warm-up extended to {ext[0]['notes']['warmup_settled_s'] if ext else '-'} s; "
      f"{timed:.0f} s of timed calls in all")
for name, rows in (("extended", ext), ("not extended", [x for x in r if "warmup_settled_s" not in x["notes"]])):
    clk = [x["notes"]["sm_clock_mhz"] for x in rows if x["notes"].get("sm_clock_mhz")]
    print(f"{name}: {len(rows)} rows, median time per call {1e6 * statistics.median(x['stats']['median'] for x in rows):.1f} us, "
          f"SM clock quartiles {[round(q) for q in statistics.quantiles(clk, n=4)]} MHz")
