#!/bin/bash
# session 38, call 1: where rung 17's energy goes at 4096^3 (scratch variants of its source)
source .device/env.sh
mkdir -p $OUT/c1
cd .scratch/s38
V="r17:17;x0:17:XP_NOCVT=0;nocvt:17:XP_NOCVT=1;nostore:17:XP_NOSTORE=1;nolds:17:XP_NOLDS=1;bare:17:XP_NOLDS=1,XP_NOCVT=1,XP_NOSTORE=1"
ESECS=1 EROUNDS=3 timeout 420 python3 exp38.py 4096x4096x4096,8192x8192x8192,128x11008x4096 5 tf32 "$V" 2>&1 | tee $OUT/c1/energy17.txt
python3 - <<'PY' 2>&1 | tee $OUT/c1/sass17.txt
import sys; sys.argv=['x','4096x4096x4096','1','tf32','a:17']
src=open('exp38.py').read().split('be = GpuBackend()')[0]
exec(compile(src,'exp38','exec'))
from gemmbench.gpu import compile as c
import subprocess, tempfile, re
from collections import Counter
for ov in ({},{'XP_NOCVT':0},{'XP_NOCVT':1},{'XP_NOSTORE':1},{'XP_NOLDS':1}):
    sp=xspec(17,ov).for_device((9,0)); p=params(sp,4096,4096,4096,ov)
    b=c.cubin(sp,(9,0),p); f=tempfile.mktemp(suffix='.cubin'); open(f,'wb').write(b)
    out=subprocess.run(['cuobjdump','-sass',f],capture_output=True,text=True).stdout
    ops=re.findall(r'^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)',out,re.M)
    cn=Counter(o.split('.')[0] for o in ops)
    print(ov, dict(cn.most_common(25)), len(ops))
PY
