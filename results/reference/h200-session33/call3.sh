# session 33, call 3: no clusters in rungs 30-33's many-tile schedule: the tile ties it changes, clusters at the big squares, issue 17's bars
A=2048x3072x1024,512x11008x4096,2048x3072x4096
python3 .scratch/s33/exp.py $A 3 bf16 "new:32;t128:32:BM=128,BN=128,STAGES=6;pairs128:32:BM=128,BN=128,STAGES=6,CLUSTER=2" > $OUT/call3-tiles-bf16.txt 2>&1; echo "A rc $?"
python3 .scratch/s33/exp.py 8192x8192x8192,5120x5120x5120 3 bf16 "new:32;pairs:32:CLUSTER=2" > $OUT/call3-big-bf16.txt 2>&1; echo "B1 rc $?"
python3 .scratch/s33/exp.py 4096x4096x4096,8192x8192x8192,2048x4096x4096,4096x1024x4096 3 fp16 "new:33;pairs:33:CLUSTER=2" > $OUT/call3-big-fp16.txt 2>&1; echo "B2 rc $?"
grep -hE "^==|new |t128 |pairs" $OUT/call3-*.txt | cut -c1-75
for i in 1 2 3; do for s in 4096 8192; do
python3 -m gemmbench compare -i 32 -i 33 --precision bf16 --precision fp16 -m $s -n $s -k $s --no-save > $OUT/issue17-$s-run$i.txt 2>&1
echo "$s run $i:"; grep -E '^\s+(32|33) ' $OUT/issue17-$s-run$i.txt | cut -c1-110
done; done
