S="4096x4096x4096,8192x8192x8192,2048x2048x2048,6144x6144x6144"
python3 .scratch/exp.py $S 5 bf16 "own:32;lean:32:LEAN=1;leanc:32:LEAN=2;leanp:32:LEAN=3" 2>&1 | grep -v precompiled > $OUT/lean-sq-bf16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/lean-sq-bf16.txt | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'
S="256x8192x8192,1024x1024x16384,2048x1024x4096,512x4096x4096,1024x1024x1024,4096x4096x4096"
python3 .scratch/exp.py $S 3 fp16 "own:33;lean:33:LEAN=1" 2>&1 | grep -v precompiled > $OUT/lean-fp16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/lean-fp16.txt | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'
