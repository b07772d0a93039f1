ncu --version | tail -1
V="BM=64,BN=64,CLUSTER=2,KSPLIT=1,PERSISTENT=0,SHARE_A=1,STAGES=12"
timeout 240 ncu --cache-control none --clock-control none --section SourceCounters --section WarpStateStats -k regex:"sgemm|nvjet" --launch-skip 9 --launch-count 3 -o $OUT/src python3 .scratch/s30/ncu16.py bf16 32 127x4096x4096 "$V" > $OUT/ncu-src-log.txt 2>&1
tail -5 $OUT/ncu-src-log.txt
ncu -i $OUT/src.ncu-rep --page source --print-source sass --csv > $OUT/src.csv 2> $OUT/src-err.txt; echo "source page rc $?"; head -c 600 $OUT/src-err.txt
ls -la $OUT
python3 .scratch/s31/srcsum.py $OUT/src.csv > $OUT/src-summary.txt 2>&1; cat $OUT/src-summary.txt | cut -c1-260
ncu -i $OUT/src.ncu-rep --page details --print-details all > $OUT/src-details.txt 2>&1
grep -E "Kernel|nvjet|sgemm|Stall|stall" $OUT/src-details.txt | head -60 | cut -c1-200
S="127x4096x4096,64x4096x4096,256x8192x8192,4096x4096x4096,16x8192x8192,1024x1024x16384"
python3 .scratch/exp.py $S 3 bf16 "own:32;own-p256:32;own-p64:32" 2>&1 | grep -v precompiled > $OUT/promo-bf16.txt
grep -E '^==|^   |skip|rror|Trace' $OUT/promo-bf16.txt | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}'
