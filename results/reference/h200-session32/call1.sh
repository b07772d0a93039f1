set -x
nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader
S17=4096x4096x4096,2048x3072x1024,512x4096x4096,2048x768x3072,4096x256x4096,128x11008x4096,2048x1024x4096,1024x1024x1024,256x8192x8192,2048x4096x4096,8192x8192x8192,1023x1025x1027
python3 .scratch/s32/ab.py $S17 3 tf32 17 .scratch/s32/oldsrc > $OUT/call1-ab17-tf32.txt 2>&1; tail -14 $OUT/call1-ab17-tf32.txt
python3 .scratch/s32/ab.py 4096x4096x4096,1024x1024x1024,512x512x512,2048x2048x2048,4096x16x4096,256x256x65536 3 3xtf32 18 .scratch/s32/oldsrc > $OUT/call1-ab18.txt 2>&1; tail -7 $OUT/call1-ab18.txt
for t in memcheck racecheck synccheck; do compute-sanitizer --tool $t python3 benchmarks/sanitize.py 127 255 511 16,17,18 2>&1 | tail -3; compute-sanitizer --tool $t python3 benchmarks/sanitize.py 601 999 2049 16,17,18 2>&1 | tail -3; done > $OUT/call1-sanitizers.txt 2>&1; cat $OUT/call1-sanitizers.txt
