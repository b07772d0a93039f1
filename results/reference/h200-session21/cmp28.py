import re, sys
def load(path, col):
    rows={}
    for line in open(path):
        m = re.match(r"\s+(\d+)x(\d+)x(\d+)\b", line)
        if not m: continue
        cells = re.split(r"\s{2,}", line.strip())
        vals=[]
        for c in cells[1:]:
            n = re.search(r"[\d,]+(?:\.\d+)?", c)
            if n: vals.append((float(n.group().replace(",", "")), "?" in c))
        rows.setdefault(tuple(map(int,m.groups())), vals)
    return {k:(v[col][0]/v[0][0], v[col][1] or v[0][1]) for k,v in rows.items()}
big=lambda k: min(k)>=128
for path in sys.argv[1:]:
    new=load(path,1)
    print(path, len(new), "shapes; >=0.95:", sum(v>=0.95 for v,_ in new.values()),
          "; every dim >=128 below 0.90:", sorted((round(v,3),"x".join(map(str,k))) for k,(v,_) in new.items() if big(k) and v<0.90), "of", sum(big(k) for k in new), "; flagged:", sum(f for _,f in new.values()))
    print("  short of 0.95:", sorted((round(v,3),"x".join(map(str,k))) + (("flagged",) if f else ()) for k,(v,f) in new.items() if v<0.95))
    print("  333x555x777:", round(new[(333,555,777)][0],3), " 2047^3:", round(new[(2047,)*3][0],3), " 4096^3:", round(new[(4096,)*3][0],3), " 8192^3:", round(new[(8192,)*3][0],3))
