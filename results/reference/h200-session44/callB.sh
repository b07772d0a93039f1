#!/bin/bash
# session 44, call B (nvidia-h200): the shapes call A's timeout cut off (rungs 17 and 18), issue 18's TF32/3xTF32
# bars (three runs) and issue 17's 16-bit bars (three compare runs at 4096^3 and 8192^3, one at 1024^3 and 2048^3).
set +e
source .device/env.sh
D=$OUT/cB; mkdir -p $D
s=$(date +%s)
timeout 150 gemmbench sizes --shapes .scratch/s44/rest17.csv -i 17 --precision tf32 --no-tune-cache --results-dir $D/set17 > $D/set-17-rest.txt 2>&1
echo "rest17 exit $? in $(( $(date +%s) - s )) s"; s=$(date +%s)
timeout 80 gemmbench sizes --shapes .scratch/s44/rest18.csv -i 18 --precision 3xtf32 --no-tune-cache --results-dir $D/set18 > $D/set-18-rest.txt 2>&1
echo "rest18 exit $? in $(( $(date +%s) - s )) s"
for r in 1 2 3; do
  s=$(date +%s)
  timeout 60 gemmbench sizes --sweep 4096,8192 -i 17 -i 18 --precision tf32 --precision 3xtf32 --no-tune-cache --results-dir $D/tf32bars > $D/tf32-run$r.txt 2>&1
  echo "tf32 run $r exit $? in $(( $(date +%s) - s )) s"
done
for sz in 4096 8192 4096 8192 4096 8192 1024 2048; do
  s=$(date +%s); n=$(ls $D/issue17-$sz-run*.txt 2>/dev/null | wc -l); r=$((n + 1))
  timeout 60 gemmbench compare -i 32 -i 33 --precision bf16 --precision fp16 -m $sz -n $sz -k $sz --no-save > $D/issue17-$sz-run$r.txt 2>&1
  echo "issue17 $sz run $r exit $? in $(( $(date +%s) - s )) s"
done
cd $OUT && tar czf cB.tgz cB && rm -rf cB
