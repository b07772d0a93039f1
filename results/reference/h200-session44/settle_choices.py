"""Choice tables against each other: the tunes of call D (N = as shipped, S = settle extension off) and call E's
no-settle tune against the shipped rung 17 table. usage: settle_choices.py TABLE_A.json TABLE_B.json [...]:
each table after the first against the first."""
import json, sys

key = lambda p: tuple(sorted(p.items()))
first = json.load(open(sys.argv[1]))["choices"]
for path in sys.argv[2:]:
    other = json.load(open(path))["choices"]
    same = tie = 0
    lines = []
    for shape, c in other.items():
        t = first[shape]
        if key(c["params"]) == key(t["params"]):
            same += 1
        else:
            near = [key({**t["params"], **x["changed"]}) for x in t.get("close", [])] + \
                   [key({**c["params"], **x["changed"]}) for x in c.get("close", [])]
            hit = key(c["params"]) in near or key(t["params"]) in near
            tie += hit
            changed = {k: (t["params"][k], v) for k, v in c["params"].items() if t["params"].get(k) != v}
            lines.append(f"  {shape}: {changed} {'(a near-tie of either table)' if hit else '(no near-tie)'}")
        lines.append(f"  {shape}: best {t['time_us']} -> {c['time_us']} us ({c['time_us'] / t['time_us']:.3f}x)")
    print(f"{path} against {sys.argv[1]}: the same choice at {same} of {len(other)} shapes; of the rest, {tie} a near-tie")
    print("\n".join(lines))
