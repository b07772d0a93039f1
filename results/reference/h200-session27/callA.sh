set -x
S="8192x64x8192,64x64x131072,4096x1x4096,3x5x7,4096x16x4096,4096x64x4096,16384x64x4096,2048x64x8192,1000x17x3001"
python3 .scratch/exp.py $S 3 bf16 "new:32" 2>&1 | grep -v precompiled > $OUT/ab-new-bf16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $S 3 bf16 "head:32" 2>&1 | grep -v precompiled > $OUT/ab-head-bf16.txt)
python3 .scratch/exp.py $S 3 fp16 "new:33" 2>&1 | grep -v precompiled > $OUT/ab-new-fp16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $S 3 fp16 "head:33" 2>&1 | grep -v precompiled > $OUT/ab-head-fp16.txt)
python3 -m pytest -m gpu -q -x -p no:cacheprovider tests/test_half_gpu.py tests/test_half.py > $OUT/pytest-half.txt 2>&1; tail -2 $OUT/pytest-half.txt
for t in memcheck racecheck synccheck; do
  for s in "1000 17 3001" "300 64 4097" "4099 3 37"; do
    timeout 100 compute-sanitizer --tool $t --print-limit 5 python3 benchmarks/sanitize.py $s 30,31,32,33 2>&1 | tail -2
  done
done > $OUT/sanitizers.txt 2>&1
cat $OUT/sanitizers.txt
set +x
