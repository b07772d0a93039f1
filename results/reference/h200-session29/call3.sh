set -x
python3 -m pytest -m gpu -q -p no:cacheprovider -k "clusters or pairs or partials" tests/test_half_gpu.py > $OUT/pytest-c.txt 2>&1; tail -3 $OUT/pytest-c.txt
SB="64x4096x4096,16x4096x4096,32x4096x11008,16x4096x14336,64x4096x2048,128x1024x4096,64x3072x4096,256x512x2048,1024x128x4096,64x2048x8192,100x1024x4096,48x2048x2048,16x3072x8192"
SF="64x4096x4096,128x1024x4096,64x3072x4096,16x4096x14336,32x2048x4096"
python3 .scratch/exp.py $SB 3 bf16 "new:32" 2>&1 | grep -v precompiled > $OUT/ab-new-bf16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $SB 3 bf16 "head:32" 2>&1 | grep -v precompiled > $OUT/ab-head-bf16.txt)
python3 .scratch/exp.py $SF 3 fp16 "new:33" 2>&1 | grep -v precompiled > $OUT/ab-new-fp16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $SF 3 fp16 "head:33" 2>&1 | grep -v precompiled > $OUT/ab-head-fp16.txt)
python3 .scratch/exp.py $SB 3 bf16 "new:32" 2>&1 | grep -v precompiled > $OUT/ab-new2-bf16.txt
for t in memcheck racecheck synccheck; do
  for s in "33 3001 4097" "50 4001 3000"; do
    echo "== $t $s"; timeout 100 compute-sanitizer --tool $t --print-limit 5 python3 benchmarks/sanitize.py $s 30,31,32,33 2>&1 | tail -2
  done
done > $OUT/sanitizers.txt 2>&1
cat $OUT/sanitizers.txt
for f in $OUT/ab*.txt; do echo "## $f"; grep -E '^   ' $f | awk '{print $1, $2, $3, $4, $5}'; done
