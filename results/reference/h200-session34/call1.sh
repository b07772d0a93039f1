# session 34, call 1: rung 17 (TF32) with 128x128 tiles on 6 slots and 192x128 tiles on 4-5, at issue 18's short TF32
# shapes; 16-bit pairs against tiles alone at 2-3 waves, order reversed every other round
set +e
source .device/env.sh >/dev/null
V17="tab:17;t128s4:17:BM=128,BN=128,STAGES=4,SPLITS=1;t128s6:17:BM=128,BN=128,STAGES=6,SPLITS=1;t128s6k2:17:BM=128,BN=128,STAGES=6,SPLITS=2;t192s4:17:BM=192,BN=128,STAGES=4,SPLITS=1;t192s5:17:BM=192,BN=128,STAGES=5,SPLITS=1;t192s5k2:17:BM=192,BN=128,STAGES=5,SPLITS=2"
S1=1001x3001x999,333x555x777,128x11008x4096,128x12288x4096,128x14336x4096,2048x3072x1024,2048x3072x768,2048x768x3072,4096x256x4096,512x4096x4096
S2=512x11008x4096,512x6144x4096,2048x1024x4096,512x4096x14336,2048x4096x4096,2048x14336x4096,6144x6144x6144,4096x4096x4096
timeout 280 python3 .scratch/s34/exp.py $S1 3 tf32 "$V17" > $OUT/call1-tf32-a.txt 2>&1; echo "A rc $?"
timeout 250 python3 .scratch/s34/exp.py $S2 3 tf32 "$V17" > $OUT/call1-tf32-b.txt 2>&1; echo "B rc $?"
grep -hE "^==|^   |skip|precompile" $OUT/call1-tf32-*.txt | sed -E 's/\{.*\}//' | cut -c1-100
