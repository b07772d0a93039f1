S="127x4096x4096,100x4096x4096,65x4096x4096,64x4096x4096,256x8192x8192,1024x1024x16384,16x8192x8192,4096x128x4096,2048x1024x4096,512x4096x4096,4096x4096x4096,1024x1024x1024"
python3 .scratch/exp.py $S 3 bf16 "own:32;lean:32:LEAN=1" 2>&1 | grep -v precompiled > $OUT/lean-bf16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/lean-bf16.txt | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'
T="BM=64,CLUSTER=2,KSPLIT=1,PERSISTENT=0,SHARE_A=1,BN=64,STAGES=12"
python3 .scratch/exp.py 127x4096x4096,100x4096x4096,128x4096x4096 3 bf16 "own:32;lean:32:LEAN=1;sa12l:32:$T,LEAN=1;t64l:32:BM=64,BN=64,CLUSTER=1,KSPLIT=1,PERSISTENT=0,STAGES=12,LEAN=1" 2>&1 | grep -v precompiled > $OUT/lean-sa-bf16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/lean-sa-bf16.txt | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'
