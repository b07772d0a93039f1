#!/bin/bash
# session 39, call 7: call 5 again with the junk loads kept (summed into a value the kernel may store) and a
# rounding the compiler may not hoist (XP_CVTV, with B read once a unit); SASS counts first, then 5 rounds.
source .device/env.sh
export D=$OUT/c7; mkdir -p $D
cd .scratch/s39
python3 - <<'PY' 2>&1 | tee $D/sass.txt
import sys, os; sys.argv=['x','128x11008x4096','1','tf32','a:17']
src=open('exp38.py').read().split('be = GpuBackend()')[0]
exec(compile(src,'exp38','exec'))
from gemmbench.gpu import compile as c
import subprocess, tempfile, re
from collections import Counter
for name, ov in (("r17", {}), ("nolds", {'XP_NOLDS': 1}), ("lds1", {'XP_LDSONLY': 1}), ("lds2", {'XP_LDSONLY': 2}), ("cvtonly", {'XP_NOLDS': 1, 'XP_CVTV': 1})):
    sp=xspec(17,ov).for_device((9,0)) if ov else get_spec("gpu",17).for_device((9,0)); p=params(sp,128,11008,4096,ov)
    b=c.cubin(sp,(9,0),p); f=tempfile.mktemp(suffix='.cubin'); open(f,'wb').write(b)
    out=subprocess.run(['cuobjdump','-sass',f],capture_output=True,text=True).stdout
    ops=re.findall(r'^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)',out,re.M)
    cn=Counter(o.split('.')[0] for o in ops)
    print(name, ov, {k: cn.get(k, 0) for k in ('FSETP','LOP3','IADD3','SEL','FADD','LDS','HGMMA')}, "total", len(ops), flush=True)
    open(f"{os.environ['D']}/{name}.sass","w").write(out)
PY
timeout 200 python3 exp38.py 128x11008x4096,4096x4096x4096 5 tf32 \
  "r17:17;nolds:17:XP_NOLDS=1;lds1:17:XP_LDSONLY=1;lds2:17:XP_LDSONLY=2;cvtonly:17:XP_NOLDS=1,XP_CVTV=1" > $D/b-path.txt 2>&1
grep -E "^==|   (r17|nolds|lds1|lds2|cvtonly|cublas)" $D/b-path.txt | sed 's/{.*}//' | cut -c1-150
cd $OUT && tar czf c7.tgz c7 && rm -rf c7
