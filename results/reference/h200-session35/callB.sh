# session 35, call B (nvidia-h200): a new user's GPU path; tune --resume for real (a tune of six shapes stopped by
# SIGTERM after 45 s, then resumed); rung 17 over the whole shape set
set +e
REPO=$PWD
WHEELS=".fresh/wheels .whl2" OUT=$OUT/fresh timeout 170 bash benchmarks/fresh_venv.sh; echo "fresh_venv.sh exit $?"
cd /tmp/gemmbench-fresh
G=.venv/bin/gemmbench
T="tune -i 17 --shapes $REPO/.scratch/s35/sub.csv --no-tune-cache --results-dir $OUT/res --table $OUT/t17-sub.json"
s=$(date +%s.%N); timeout -s TERM 45 $G $T > $OUT/resume-1.txt 2>&1; echo "first tune exit $? after $(echo "$(date +%s.%N) - $s" | bc) s"
tail -4 $OUT/resume-1.txt | cut -c1-200
first=$(ls -t $OUT/res/tune-*.json | head -1); echo "first record: $first"
s=$(date +%s.%N); timeout 150 $G $T --resume $first > $OUT/resume-2.txt 2>&1; echo "resumed tune exit $? after $(echo "$(date +%s.%N) - $s" | bc) s"
grep -E "resume|wrote|carried" $OUT/resume-2.txt | cut -c1-220
ls -la $OUT/res $OUT/t17-sub.json
s=$(date +%s.%N); timeout 250 $G sizes --shapes benchmarks/shapes -i 17 --precision tf32 --no-tune-cache --results-dir $OUT/set > $OUT/set-17.txt 2>&1; echo "set exit $? after $(echo "$(date +%s.%N) - $s" | bc) s"
tail -3 $OUT/set-17.txt | cut -c1-200
