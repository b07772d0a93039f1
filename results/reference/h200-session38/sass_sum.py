"""Scratch (session 38): an ncu source-page CSV (--page source --print-source sass --csv) -> executed
instructions and stall samples by opcode; with a second argument N, the N instructions with the most samples."""
import csv,sys,re,collections
rows=list(csv.reader(open(sys.argv[1])))
h=rows[1]; i_src=h.index("Source"); i_ex=h.index("Instructions Executed"); i_s=h.index("Warp Stall Sampling (All Samples)")
cnt=collections.Counter(); stall=collections.Counter(); tot=0; st=0
hot=[]
for r in rows[2:]:
    if len(r)<=i_ex: continue
    src=r[i_src].strip(); ex=int(r[i_ex] or 0); s=int(r[i_s] or 0)
    op=re.sub(r'^@!?U?P\w+\s+','',src).split(' ')[0]
    cnt[op]+=ex; stall[op]+=s; tot+=ex; st+=s
    hot.append((ex,s,src))
print("total inst", tot, "samples", st)
for op,c in cnt.most_common(30): print(f"  {op:28s} {c:>10d} {100*c/tot:5.1f}%  stall-samples {stall[op]:6d} {100*stall[op]/max(st,1):5.1f}%")
if len(sys.argv)>2:
    print("-- hottest by samples")
    for ex,s,src in sorted(hot,key=lambda x:-x[1])[:int(sys.argv[2])]: print(f"  {ex:9d} {s:6d}  {src}")
