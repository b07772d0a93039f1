S1="127x4096x4096,100x4096x4096,65x4096x4096,64x4096x4096,127x4096x8192,128x1024x4096,4096x128x4096,16x8192x8192,33x3001x4097"
python3 .scratch/exp.py $S1 3 bf16 "own:32;kwg2:32:KWG=2" 2>&1 | grep -v precompiled > $OUT/kwg-bf16.txt
python3 .scratch/exp.py 127x4096x4096,100x4096x4096,64x4096x4096 3 bf16 "t64:32:BM=64,BN=64,CLUSTER=1,KSPLIT=1,PERSISTENT=0,STAGES=12;t64k:32:BM=64,BN=64,CLUSTER=1,KSPLIT=1,PERSISTENT=0,STAGES=11,KWG=2" 2>&1 | grep -v precompiled > $OUT/kwg-t64-bf16.txt
(cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 -c "import gemmbench,sys;print(gemmbench.__file__)" && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py 127x4096x4096,64x4096x4096,16x8192x8192 3 bf16 "base:32") 2>&1 | grep -v precompiled > $OUT/base-bf16.txt
for f in $OUT/*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror|Trace' $f | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'; done
