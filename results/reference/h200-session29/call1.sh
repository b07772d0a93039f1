set -x
python3 -m pytest -m gpu -q -p no:cacheprovider "tests/test_gpu.py::test_tune_stores_the_best_and_run_uses_it" "tests/test_userkernel_gpu.py::test_tune_a_kernel_file_then_run_uses_the_tuned_parameters" -k "clusters or pairs or tune" tests/test_half_gpu.py > $OUT/pytest-a.txt 2>&1; tail -3 $OUT/pytest-a.txt
C4="c4:32:KSPLIT=4,CLUSTER=4,BM=64,BN=128,STAGES=6,PERSISTENT=0"
C8="c8:32:KSPLIT=8,CLUSTER=8,BM=64,BN=128,STAGES=6,PERSISTENT=0"
P4="p4:32:KSPLIT=4,CLUSTER=1,BM=64,BN=128,STAGES=8,PERSISTENT=1"
S1="16x4096x4096,32x4096x4096,64x4096x4096,16x4096x14336,32x4096x11008,512x512x4096,2048x128x8192,512x512x32768,1024x128x4096"
python3 .scratch/exp.py $S1 3 bf16 "own:32;$C4;$P4" 2>&1 | grep -v precompiled > $OUT/c4-bf16.txt
S2="64x2048x8192,128x1024x4096,256x256x8192,256x256x65536,32x2048x4096,128x128x65536"
python3 .scratch/exp.py $S2 3 bf16 "own:32;$C4;$C8" 2>&1 | grep -v precompiled > $OUT/c8-bf16.txt
S3="16x4096x4096,64x4096x4096,512x512x4096,64x2048x8192"
python3 .scratch/exp.py $S3 3 fp16 "own:33;${C4/:32:/:33:};${C8/:32:/:33:}" 2>&1 | grep -v precompiled > $OUT/c4-fp16.txt
S4="128x4096x4096,1024x1024x4096,4096x128x4096,100x4096x4096"
python3 .scratch/exp.py $S4 3 bf16 "own:32" 2>&1 | grep -v precompiled > $OUT/pairs-bf16.txt
cat $OUT/*.txt | grep -v '^\.' | head -150
