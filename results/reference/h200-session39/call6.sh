#!/bin/bash
# session 39, call 6: did the compiler take the rounding out of the loop in call 5's variants? SASS opcode counts.
source .device/env.sh
export D=$OUT/c6; mkdir -p $D
cd .scratch/s39
python3 - <<'PY' 2>&1 | tee $D/sass.txt
import sys; sys.argv=['x','128x11008x4096','1','tf32','a:17']
src=open('exp38.py').read().split('be = GpuBackend()')[0]
exec(compile(src,'exp38','exec'))
from gemmbench.gpu import compile as c
import subprocess, tempfile, re
from collections import Counter
for name, ov in (("r17", {}), ("nolds", {'XP_NOLDS': 1}), ("lds1", {'XP_LDSONLY': 1}), ("lds2", {'XP_LDSONLY': 2}), ("slice", {'XP_SLICE': 1})):
    sp=xspec(17,ov).for_device((9,0)) if ov else get_spec("gpu",17).for_device((9,0)); p=params(sp,128,11008,4096,ov)
    b=c.cubin(sp,(9,0),p); f=tempfile.mktemp(suffix='.cubin'); open(f,'wb').write(b)
    out=subprocess.run(['cuobjdump','-sass',f],capture_output=True,text=True).stdout
    ops=re.findall(r'^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)',out,re.M)
    cn=Counter(o.split('.')[0] for o in ops)
    print(name, ov, {k: cn.get(k, 0) for k in ('FSETP','LOP3','IADD3','SEL','FSEL','LDS','HGMMA','WARPGROUP','BAR','SYNCS')}, "total", len(ops))
    import os; open(f"{os.environ['D']}/{name}.sass","w").write(out)
PY
cd $OUT && tar czf c6.tgz c6 && rm -rf c6
