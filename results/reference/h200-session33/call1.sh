# session 33, call 1: the no-cluster rule (rungs 32/33) against HEAD's choice; ground truth at multi-kernel shapes;
# the half ring's one slot advance (half_next_slot) through test_half_gpu.py
S1=384x11008x4096,384x11008x1024,320x5120x4096,192x5120x4096,512x5120x4096,640x12288x4096,640x14336x1024,896x11008x4096,896x28672x4096,640x28672x1024,2048x1536x4096,640x3072x1024
S2=384x11008x4096,512x5120x4096,896x28672x4096,2048x1536x4096,640x3072x1024
python3 .scratch/s33/exp.py $S1 3 bf16 "new:32;was:32:ALONE=0" > $OUT/call1-alone-bf16.txt 2>&1; echo "exp bf16 rc $?"
python3 .scratch/s33/exp.py $S2 3 fp16 "new:33;was:33:ALONE=0" > $OUT/call1-alone-fp16.txt 2>&1; echo "exp fp16 rc $?"
grep -E "^==|new |was " $OUT/call1-alone-*.txt | cut -c1-200
timeout 150 python3 -m pytest -m gpu -q -x tests/test_half_gpu.py --durations=3 > $OUT/call1-pytest-half.txt 2>&1; echo "pytest half rc $?"; tail -8 $OUT/call1-pytest-half.txt
timeout 200 python3 benchmarks/ground_truth.py --rungs 0,28 --shapes 2047x2047x2047,1000x1000x1000,4096x127x4096 --calls 10 --json $OUT/call1-gt-28.json > $OUT/call1-gt-28.txt 2>&1; echo "gt28 rc $?"; cat $OUT/call1-gt-28.txt | cut -c1-400
timeout 150 python3 benchmarks/ground_truth.py --rungs 0:bf16,32 --shapes 512x512x32768,150x3000x4000 --calls 10 --json $OUT/call1-gt-32.json > $OUT/call1-gt-32.txt 2>&1; echo "gt32 rc $?"; cat $OUT/call1-gt-32.txt | cut -c1-400
timeout 100 python3 benchmarks/ground_truth.py --rungs 0:tf32,17 --shapes 2048x3072x1024 --calls 10 --json $OUT/call1-gt-17.json > $OUT/call1-gt-17.txt 2>&1; echo "gt17 rc $?"; cat $OUT/call1-gt-17.txt | cut -c1-400
