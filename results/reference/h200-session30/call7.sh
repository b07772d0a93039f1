S="256x8192x8192,128x11008x4096,128x14336x4096,512x4096x4096,512x3072x1024,801x1537x3001,1280x1280x1280,2048x768x3072,2048x1024x4096,512x4096x14336,2048x1024x1024"
python3 .scratch/exp.py $S 3 bf16 "new:32;s5:32:STAGES=5;s6:32:STAGES=6" 2>&1 | grep -v precompiled > $OUT/st128-bf16.txt
python3 .scratch/exp.py 256x8192x8192,128x11008x4096,512x4096x4096,801x1537x3001 3 fp16 "new:33;s5:33:STAGES=5;s6:33:STAGES=6" 2>&1 | grep -v precompiled > $OUT/st128-fp16.txt
for f in $OUT/st128*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror|Trace' $f | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'; done
