# session 37, call 5 (nvidia-h200): issue 17's bars again, as the thirty-second session measured them (its call10.sh):
# three separate compare runs of rungs 32/33 at 4096^3 and 8192^3, alternating, default options; 1024^3 and 2048^3 once
source .device/env.sh
set +e
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
s0=$(date +%s)
for i in 1 2 3; do for s in 4096 8192; do
timeout 100 python3 -m gemmbench compare -i 32 -i 33 --precision bf16 --precision fp16 -m $s -n $s -k $s --no-save > $OUT/issue17-$s-run$i.txt 2>&1
echo "$s run $i (exit $?): $(grep -E '^\s+(0|32|33) ' $OUT/issue17-$s-run$i.txt | grep -E 'BF16|FP16' | awk '{print $1, $3, $(NF-9), $(NF-8), $(NF-7)}' | tr '\n' ' ')"
done; done
for s in 1024 2048; do
timeout 100 python3 -m gemmbench compare -i 32 -i 33 --precision bf16 --precision fp16 -m $s -n $s -k $s --no-save > $OUT/issue17-$s-run1.txt 2>&1
echo "$s run 1 (exit $?)"
done
echo "all in $(( $(date +%s) - s0 )) s"
for f in $OUT/issue17-*.txt; do echo "== $f"; grep -E '^\s+(0|32|33) ' $f | grep -E 'BF16|FP16' | cut -c1-150; done
