set -x
python3 .scratch/clq.py > $OUT/clusters.txt 2>&1; cat $OUT/clusters.txt
C3="c3:32:KSPLIT=3,CLUSTER=3,BM=64,BN=128,STAGES=6,PERSISTENT=0"
C4="c4:32:KSPLIT=4,CLUSTER=4,BM=64,BN=128,STAGES=6,PERSISTENT=0"
S1="16x4096x4096,64x4096x4096,16x4096x14336,32x4096x11008,512x512x4096,2048x128x8192,512x512x32768,16x5120x4096"
python3 .scratch/exp.py $S1 3 bf16 "own:32;$C3" 2>&1 | grep -v precompiled > $OUT/c3-bf16.txt
S2="64x3072x4096,32x3072x4096,1024x128x4096,256x512x4096"
python3 .scratch/exp.py $S2 3 bf16 "own:32;$C3;$C4" 2>&1 | grep -v precompiled > $OUT/c34-bf16.txt
S3="64x4096x4096,16x5120x4096,64x3072x4096"
python3 .scratch/exp.py $S3 3 fp16 "own:33;${C3/:32:/:33:};${C4/:32:/:33:}" 2>&1 | grep -v precompiled > $OUT/c34-fp16.txt
SP="100x4096x4096,127x4096x4096,128x4096x4096,4096x128x4096,1024x1024x4096"
python3 .scratch/exp.py $SP 3 bf16 "new:32" 2>&1 | grep -v precompiled > $OUT/pairs-new-bf16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $SP 3 bf16 "head:32" 2>&1 | grep -v precompiled > $OUT/pairs-head-bf16.txt)
python3 .scratch/exp.py $SP 3 bf16 "new:32" 2>&1 | grep -v precompiled > $OUT/pairs-new2-bf16.txt
python3 -m pytest -m gpu -q -p no:cacheprovider -k "clusters or pairs" tests/test_half_gpu.py > $OUT/pytest-b.txt 2>&1; tail -3 $OUT/pytest-b.txt
for f in $OUT/*.txt; do echo "## $f"; grep -E '==|^   ' $f | awk '{print $1, $2, $3, $4, $5, $6}'; done
