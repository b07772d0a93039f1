# session 33, call 2: clusters against none at tied estimates (rung 32, BF16); ground truth again; the rule through the tool
S=1280x1280x1280,2048x2048x2048,512x4096x4096,2048x1024x4096,4096x1024x4096,2560x2560x2560,2048x4096x4096,3072x3072x3072,4096x4096x1024,2048x11008x4096,4096x4096x4096,6144x6144x6144
python3 .scratch/s33/exp.py $S 3 bf16 "pairs:32;c1:32:CLUSTER=1" > $OUT/call2-ties-bf16.txt 2>&1; echo "exp rc $?"
grep -E "^==|pairs |c1 " $OUT/call2-ties-bf16.txt | cut -c1-75
timeout 120 python3 benchmarks/ground_truth.py --rungs 0:tf32,17 --shapes 2048x3072x1024,1024,4096 --calls 10 --json $OUT/call2-gt-17.json > $OUT/call2-gt-17.txt 2>&1; echo "gt17 rc $?"; cut -c1-330 $OUT/call2-gt-17.txt
timeout 150 python3 benchmarks/ground_truth.py --rungs 0:bf16,32 --shapes 512x512x32768,150x3000x4000,384x11008x4096 --calls 10 --json $OUT/call2-gt-32.json > $OUT/call2-gt-32.txt 2>&1; echo "gt32 rc $?"; cut -c1-400 $OUT/call2-gt-32.txt
gemmbench sizes --shapes .scratch/s33/changed33.csv -i 30 -i 31 -i 32 -i 33 --precision bf16 --precision fp16 --no-tune-cache --no-save > $OUT/call2-sizes-changed.txt 2>&1; echo "sizes rc $?"; grep -E "^ *(0|30|31|32|33) |x" $OUT/call2-sizes-changed.txt | cut -c1-160 | head -60
