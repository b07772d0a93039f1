#!/bin/bash
# session 38, call 4: rung 17's B rounding: cvt.rna (4 SASS ops an element) against one- and two-op forms
source .device/env.sh
D=$OUT/c4; mkdir -p $D
cd .scratch/s38
ESECS=1 EROUNDS=3 timeout 400 python3 exp38.py 4096x4096x4096,8192x8192x8192,2048x14336x4096,6144x6144x6144,127x320x511,1000x1000x1000 5 tf32 \
  "r17:17;trunc:17:XP_CVT=1;rnd2:17:XP_CVT=2" 2>&1 | tee $D/cvt.txt
python3 - <<'PY' 2>&1 | tee $D/sass.txt
import sys; sys.argv=['x','4096x4096x4096','1','tf32','a:17']
src=open('exp38.py').read().split('be = GpuBackend()')[0]
exec(compile(src,'exp38','exec'))
from gemmbench.gpu import compile as c
import subprocess, tempfile, re
from collections import Counter
for ov in ({},{'XP_CVT':1},{'XP_CVT':2}):
    sp=xspec(17,ov).for_device((9,0)); p=params(sp,4096,4096,4096,ov)
    b=c.cubin(sp,(9,0),p); f=tempfile.mktemp(suffix='.cubin'); open(f,'wb').write(b)
    out=subprocess.run(['cuobjdump','-sass',f],capture_output=True,text=True).stdout
    ops=re.findall(r'^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)',out,re.M)
    cn=Counter(o.split('.')[0] for o in ops)
    print(ov, dict(cn.most_common(14)), len(ops))
PY
