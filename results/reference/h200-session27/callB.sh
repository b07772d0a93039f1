set -x
S="1x4099x4096,1x4096x4096,4096x1x4096,1x11008x4096,1x4096x14336,1x14336x4096,8192x1x8192,1x4100x3000,1031x1x260,1x1x4099"
python3 .scratch/exp.py $S 3 bf16 "new:32" 2>&1 | grep -v precompiled > $OUT/gemv-new-bf16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $S 3 bf16 "head:32" 2>&1 | grep -v precompiled > $OUT/gemv-head-bf16.txt)
python3 .scratch/exp.py $S 3 fp16 "new:33" 2>&1 | grep -v precompiled > $OUT/gemv-new-fp16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $S 3 fp16 "head:33" 2>&1 | grep -v precompiled > $OUT/gemv-head-fp16.txt)
python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gemv_gpu.py tests/test_gemv.py > $OUT/pytest-gemv.txt 2>&1; tail -2 $OUT/pytest-gemv.txt
for t in memcheck racecheck synccheck; do
  for s in "1 4100 3000" "1031 1 260" "1 1028 257"; do
    timeout 100 compute-sanitizer --tool $t --print-limit 5 python3 benchmarks/sanitize.py $s 30,31,32,33 2>&1 | tail -2
  done
done > $OUT/sanitizers-gemv.txt 2>&1
cat $OUT/sanitizers-gemv.txt
set +x
