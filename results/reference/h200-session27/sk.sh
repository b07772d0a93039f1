# Stream-K (rung 17, STREAM_K=1) against rung 17's table choice (new tree, explicit params) and the old tree.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
SHAPES_T="128x11008x4096 128x12288x4096 128x14336x4096 2048x768x3072 4096x256x4096 512x4096x4096 2048x3072x1024 2048x1024x4096 512x11008x4096 2048x3072x768 4096x4096x4096 1024x1024x1024"
ODD="127x255x2051 1000x1001x999 33x256x4097 300x1000x4097 65x70x9000 40x90x3000 9x20x2000"
tp() { python3 - "$1" <<'PY'
import json, sys
d = json.load(open('.scratch/old/gemmbench/rungs/tf32_tma_ws_h200.json'))['choices'].get(sys.argv[1])
p = d['params'] if d else {}
print(",".join(f"{k}={v}" for k, v in p.items() if k in ("BM", "BN", "STAGES", "SPLITS")))
PY
}
V="sk128:17:BM=128,BN=128,STAGES=4,SPLITS=1,STREAM_K=1;sk256:17:BM=256,BN=128,STAGES=4,SPLITS=1,STREAM_K=1;sk64:17:BM=128,BN=64,STAGES=4,SPLITS=1,STREAM_K=1;sk64x128:17:BM=64,BN=128,STAGES=8,SPLITS=1,STREAM_K=1"
echo "### odd shapes: verification of every stream-K tile" | tee -a $OUT/sk-odd.txt
python3 .scratch/exp.py "$(echo $ODD | tr ' ' ',')" 1 tf32 "$V;thin16:17:BM=16,BN=64,STAGES=8,SPLITS=1,STREAM_K=1;thin32:17:BM=32,BN=128,STAGES=8,SPLITS=1,STREAM_K=1" 2>&1 | tee -a $OUT/sk-odd.txt
for s in $SHAPES_T; do
  t=$(tp $s)
  python3 .scratch/exp.py $s 3 tf32 "table:17:$t;$V" 2>&1 | grep -v precompiled | tee -a $OUT/sk-time.txt
done
echo "### old tree (HEAD), its own selection" | tee -a $OUT/sk-time.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py "$(echo $SHAPES_T | tr ' ' ',')" 3 tf32 "head17:17" 2>&1 | grep -v precompiled | tee -a $OUT/sk-time.txt)
