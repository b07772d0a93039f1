S="2048x32x8192,2048x64x8192,1000x17x3001,300x40x5000,8192x64x8192,64x64x131072"
timeout 100 python3 .scratch/exp.py $S 3 bf16 "new:32;s12:32:STAGES=12;s13:32:STAGES=13" 2>&1 | grep -v precompiled > $OUT/narrow64-bf16.txt
for f in $OUT/*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror|Trace' $f | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'; done
