python3 .scratch/exp.py 65536x64x1024 3 bf16 "new:32;head:32:STAGES=4,BM=192" 2>&1 | grep -v precompiled >> $OUT/call6-ab-32-bf16.txt
python3 .scratch/exp.py 65536x16x4096 3 bf16 "new:32;head:32:STAGES=4,BM=192" 2>&1 | grep -v precompiled >> $OUT/call6-ab-32-bf16.txt
python3 .scratch/exp.py 65536x128x4096 3 bf16 "new:32;head:32:STAGES=4,BM=192" 2>&1 | grep -v precompiled >> $OUT/call6-ab-32-bf16.txt
python3 .scratch/exp.py 65536x100x1024 3 bf16 "new:32;head:32:STAGES=4,BM=192" 2>&1 | grep -v precompiled >> $OUT/call6-ab-32-bf16.txt
python3 .scratch/exp.py 65536x1x8192 3 bf16 "new:32;head:32:STAGES=4,BM=192" 2>&1 | grep -v precompiled >> $OUT/call6-ab-32-bf16.txt
for f in $OUT/call6-ab-*.txt; do echo "## $f"; grep -E '^==|^   (new|head)' $f | awk '/^==/{s=$2} /^   /{printf "%s %s %s %s | ", s, $1, $2, $4} /head/{print ""}'; done
