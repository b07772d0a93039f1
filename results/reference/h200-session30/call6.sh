S="127x4096x4096,100x4096x4096,65x4096x4096,64x4096x4096,16x4096x4096,127x4096x8192,128x11008x4096,4096x128x4096,16x8192x8192"
python3 .scratch/exp.py $S 3 bf16 "new:32;a1b2:32:HINT_A=1,HINT_B=2;a0b2:32:HINT_B=2;a1b0:32:HINT_A=1;a2b2:32:HINT_A=2,HINT_B=2;a1b1:32:HINT_A=1,HINT_B=1" 2>&1 | grep -v precompiled > $OUT/hint-bf16.txt
for f in $OUT/hint*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror|Trace' $f | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'; done
