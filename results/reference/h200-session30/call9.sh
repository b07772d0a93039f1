S="5120x5120x5120,2560x2560x2560,3584x3584x3584,1536x1536x1536,4096x768x3072,2048x2304x768,3072x3072x3072"
timeout 90 python3 .scratch/exp.py $S 3 bf16 "new:32;t128:32:BM=128,BN=128,STAGES=6" 2>&1 | grep -v precompiled > $OUT/rate128-bf16.txt
S2="4096x128x4096,128x1024x4096,1024x128x4096,64x3072x4096,256x512x4096,2048x256x4096,1024x512x4096,512x768x3072,32x2048x4096,128x4096x4096"
(cd .scratch/ring && timeout 90 python3 ../exp.py $S2 3 bf16 "ring6:32;ring8:32:STAGES=8" 2>&1 | grep -v precompiled > $OUT/ring8-bf16.txt)
for f in $OUT/*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror|Trace' $f | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'; done
