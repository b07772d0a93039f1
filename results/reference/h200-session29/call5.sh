set -x
python3 -m pytest -m gpu -q -p no:cacheprovider -k "clusters or pairs" tests/test_half_gpu.py > $OUT/pytest-e.txt 2>&1; tail -2 $OUT/pytest-e.txt
P64="p64:32:KSPLIT=2,CLUSTER=2,BM=64,BN=128,STAGES=6,PERSISTENT=0"
P128="p128:32:KSPLIT=2,CLUSTER=2,BM=128,BN=128,STAGES=4,PERSISTENT=0"
SB="65x4096x4096,72x4096x4096,80x4096x4096,90x4096x4096,96x4096x4096,80x2048x8192,80x3072x4096,65x4096x8192"
python3 .scratch/exp.py $SB 3 bf16 "$P128;$P64" 2>&1 | grep -v precompiled > $OUT/rule-bf16.txt
SF="65x4096x4096,80x4096x4096,90x4096x4096"
python3 .scratch/exp.py $SF 3 fp16 "${P128/:32:/:33:};${P64/:32:/:33:}" 2>&1 | grep -v precompiled > $OUT/rule-fp16.txt
ST="127x4096x4096,120x4096x4096,100x4096x4096,110x4096x4096"
python3 .scratch/exp.py $ST 3 bf16 "new:32" 2>&1 | grep -v precompiled > $OUT/thr-new-bf16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $ST 3 bf16 "head:32" 2>&1 | grep -v precompiled > $OUT/thr-head-bf16.txt)
for f in $OUT/rule*.txt $OUT/thr*.txt; do echo "## $f"; grep -E '^==|^   ' $f | awk '{print $1, $2, $3, $4, $5, $6}'; done
