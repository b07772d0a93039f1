set -x
python3 -m pytest -m gpu -q -p no:cacheprovider -k "clusters or pairs" tests/test_half_gpu.py > $OUT/pytest-d.txt 2>&1; tail -3 $OUT/pytest-d.txt
P64="p64:32:KSPLIT=2,CLUSTER=2,BM=64,BN=128,STAGES=6,PERSISTENT=0"
SB="65x4096x4096,80x4096x4096,100x4096x4096,127x4096x4096,100x1024x4096,200x4096x4096,1000x1000x4096,150x3000x4000"
python3 .scratch/exp.py $SB 3 bf16 "new:32;$P64" 2>&1 | grep -v precompiled > $OUT/tail-new-bf16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $SB 3 bf16 "head:32;$P64" 2>&1 | grep -v precompiled > $OUT/tail-head-bf16.txt)
SF="80x4096x4096,100x4096x4096,200x4096x4096"
python3 .scratch/exp.py $SF 3 fp16 "new:33;${P64/:32:/:33:}" 2>&1 | grep -v precompiled > $OUT/tail-new-fp16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $SF 3 fp16 "head:33" 2>&1 | grep -v precompiled > $OUT/tail-head-fp16.txt)
for t in memcheck racecheck synccheck; do
  for s in "100 1000 3000" "200 2000 2049"; do
    echo "== $t $s"; timeout 100 compute-sanitizer --tool $t --print-limit 5 python3 benchmarks/sanitize.py $s 30,31,32,33 2>&1 | tail -5
  done
done > $OUT/sanitizers-tail.txt 2>&1
grep -E '==|SUMMARY|FAIL' $OUT/sanitizers-tail.txt
for f in $OUT/tail*.txt; do echo "## $f"; grep -E '^==|^   ' $f | awk '{print $1, $2, $3, $4, $5, $6}'; done
