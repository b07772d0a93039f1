S="127x4096x1024,127x4096x2048,127x4096x4096,127x4096x8192,64x4096x4096,64x4096x8192"
python3 .scratch/exp.py $S 3 bf16 "new:32" 2>&1 | grep -v precompiled > $OUT/kslope-bf16.txt
for f in $OUT/kslope*.txt; do echo "## $f"; grep -E '^==|^   |skip|rror' $f | awk '{print $1, $2, $3, $4, $5, $6, $7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26}'; done
timeout 200 ncu --cache-control none --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats python3 .scratch/s30/ncu16.py bf16 32 127x4096x4096 > $OUT/ncu-127-warm.txt 2>&1
grep -E "^  [a-z_]+.*Device|Duration|DRAM Throughput|L2 Hit|L1/TEX Hit|Memory Throughput|Max Bandwidth|L2 Compression|Mem Busy|Compute \(SM\)|Stall|Warp Cycles|SM Frequency|DRAM Frequency" $OUT/ncu-127-warm.txt | head -90
