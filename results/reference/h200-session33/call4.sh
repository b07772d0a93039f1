# session 33, call 4 (call 3's experiments, which failed on a stale scratch line): the tile ties, clusters at the big squares
A=2048x3072x1024,512x11008x4096
python3 .scratch/s33/exp.py $A 3 bf16 "new:32;t128:32:BM=128,BN=128,STAGES=6;pairs128:32:BM=128,BN=128,STAGES=6,CLUSTER=2" > $OUT/call4-tiles-bf16.txt 2>&1; echo "A rc $?"
python3 .scratch/s33/exp.py 8192x8192x8192 3 bf16 "new:32;pairs:32:CLUSTER=2" > $OUT/call4-big-bf16.txt 2>&1; echo "B1 rc $?"
python3 .scratch/s33/exp.py 8192x8192x8192,4096x4096x4096 3 fp16 "new:33;pairs:33:CLUSTER=2" > $OUT/call4-big-fp16.txt 2>&1; echo "B2 rc $?"
grep -hE "^==|new |t128 |pairs" $OUT/call4-*.txt | cut -c1-75
