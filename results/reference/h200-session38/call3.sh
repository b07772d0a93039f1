#!/bin/bash
# session 38, call 3: rung 17 with a TMA-store epilogue (scratch XP_TMASTORE): correctness, time, energy
source .device/env.sh
D=$OUT/c3; mkdir -p $D
cd .scratch/s38
timeout 150 python3 exp38.py 127x320x511,1000x1000x1000,4095x4096x300,333x555x777,1001x1024x999,65x8192x2050,256x128x64,32x64x1000 1 tf32 \
  "r17:17;ts:17:XP_TMASTORE=1;ts1:17:XP_TMASTORE=1,SPLITS=1" 2>&1 | tee $D/odd.txt
ESECS=1 EROUNDS=3 timeout 400 python3 exp38.py 4096x4096x4096,8192x8192x8192,6144x6144x6144,2048x3072x1024,128x11008x4096,2048x14336x4096,4096x4096x11008,1024x1024x1024 5 tf32 \
  "r17:17;ts:17:XP_TMASTORE=1" 2>&1 | tee $D/time.txt
python3 - <<'PY' 2>&1 | tee $D/res.txt
import sys; sys.argv=['x','4096x4096x4096','1','tf32','a:17']
src=open('exp38.py').read().split('be = GpuBackend()')[0]
exec(compile(src,'exp38','exec'))
from gemmbench.gpu import compile as c
import subprocess, tempfile
for ov in ({},{'XP_TMASTORE':1}):
    sp=xspec(17,ov).for_device((9,0)); p=params(sp,4096,4096,4096,ov)
    b=c.cubin(sp,(9,0),p); f=tempfile.mktemp(suffix='.cubin'); open(f,'wb').write(b)
    print(ov, subprocess.run(['cuobjdump','-res-usage',f],capture_output=True,text=True).stdout[-400:])
PY
