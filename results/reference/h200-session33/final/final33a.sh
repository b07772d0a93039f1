# session 33, final call A: a new user's GPU path (benchmarks/fresh_venv.sh, offline wheels), the changed shapes through
# the tool, clusters against none in FP16 below 4 waves, compute-sanitizer on the no-cluster schedules
set +e
REPO=$PWD
WHEELS=".fresh/wheels .whl2" OUT=$OUT/fresh bash benchmarks/fresh_venv.sh; echo "fresh_venv.sh exit $?"
cd /tmp/gemmbench-fresh && .venv/bin/gemmbench sizes --shapes $REPO/.scratch/s33/changed33.csv -i 30 -i 32 -i 33 --precision bf16 --precision fp16 --no-tune-cache --no-save > $OUT/fresh-sizes-changed.txt 2>&1; echo "sizes exit $?"
grep -E "^\s+[0-9]+x" $OUT/fresh-sizes-changed.txt | cut -c1-200
for t in memcheck racecheck synccheck; do for s in "384 11008 1024" "2047 2047 2047" "1000 3001 999"; do compute-sanitizer --tool $t .venv/bin/python benchmarks/sanitize.py $s 30,31,32,33 2>&1 | tail -1 | sed "s/^/$t $s: /"; done; done > $OUT/sanitizers-no-clusters.txt 2>&1; cat $OUT/sanitizers-no-clusters.txt
cd $REPO && source .device/env.sh >/dev/null
python3 .scratch/s33/exp.py 2048x2048x2048,3072x3072x3072,2048x4096x4096,4096x1024x4096,512x4096x4096 3 fp16 "new:33;pairs:33:CLUSTER=2" > $OUT/final-ties-fp16.txt 2>&1; echo "exp rc $?"
grep -hE "^==|new |pairs" $OUT/final-ties-fp16.txt | cut -c1-75
