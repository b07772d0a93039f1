S="16x4096x4096,32x4096x4096,48x4096x4096,64x4096x4096,16x8192x8192,32x8192x8192,64x8192x8192,16x14336x4096,16x11008x4096,16x6144x4096,16x4096x14336,100x4096x4096,17x1000x3001,127x4096x4096,4096x4096x4096"
P128="p128:32:BN=128,KSPLIT=2,CLUSTER=2,PERSISTENT=0,STAGES=6"
P256="p256:32:BM=64,BN=256,KSPLIT=2,CLUSTER=2,PERSISTENT=0,STAGES=3"
python3 .scratch/exp.py $S 3 bf16 "new:32;$P128;$P256" 2>&1 | grep -v precompiled > $OUT/s3-new-bf16.txt
(cd .scratch/old && PYTHONPATH=$PWD python3 ../exp.py $S 3 bf16 "head:32" 2>&1 | grep -v precompiled > $OUT/s3-head-bf16.txt)
python3 .scratch/exp.py $S 3 fp16 "new:33;${P128//:32/:33}" 2>&1 | grep -v precompiled > $OUT/s3-new-fp16.txt
(cd .scratch/old && PYTHONPATH=$PWD python3 ../exp.py $S 3 fp16 "head:33" 2>&1 | grep -v precompiled > $OUT/s3-head-fp16.txt)
python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_half_gpu.py tests/test_gemv_gpu.py > $OUT/s3-pytest.txt 2>&1; tail -2 $OUT/s3-pytest.txt
for t in memcheck racecheck synccheck; do
  for s in "33 300 1000" "7 64 5" "100 200 300"; do
    timeout 150 compute-sanitizer --tool $t --print-limit 5 python3 benchmarks/sanitize.py $s 22,23,24,25,26,27,30,31,32,33 2>&1 | tail -2
  done
  timeout 100 compute-sanitizer --tool $t --print-limit 5 python3 .scratch/san_p256.py 2>&1 | tail -2
done > $OUT/s3-san.txt 2>&1
cat $OUT/s3-san.txt
