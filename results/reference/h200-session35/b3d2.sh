# session 35, call D (nvidia-h200): rung 17 with each K tile of B in one 3-D TMA load (B3D, a scratch patch)
# against the same parameters with B in BN/32 loads, the table's choice at each shape (its digest no longer
# matches the patched source, so the parameters are given), three rounds beside cuBLAS TF32
source .device/env.sh
for shape in 128x11008x4096 128x12288x4096 2048x14336x4096 2048x4096x4096 2048x1024x4096 4096x4096x11008 1024x1024x1024; do
  p=$(python3 -c "
import json,sys
t=json.load(open('gemmbench/rungs/tf32_tma_ws_h200.json'))['choices']['$shape']['params']
print(','.join(f'{k}={v}' for k,v in t.items()))")
  timeout 100 python3 .scratch/s35/exp.py $shape 5 tf32 "tab:17:$p;b3d:17:$p,B3D=1" 2>&1 | grep -v '^precompiled'
done > $OUT/b3d-time-5.txt
cat $OUT/b3d-time-5.txt | cut -c1-150
cut -c1-150 $OUT/b3d-time-5.txt
