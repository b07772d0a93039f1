# session 34, final call (nvidia-h200): a new user's GPU path, rung 17's changed shapes through the tool,
# compute-sanitizer on a 192-row tile, then rung 17 over the whole shape set while device time lasts
set +e
REPO=$PWD
WHEELS=".fresh/wheels .whl2" OUT=$OUT/fresh timeout 170 bash benchmarks/fresh_venv.sh; echo "fresh_venv.sh exit $?"
cd /tmp/gemmbench-fresh
timeout 75 .venv/bin/gemmbench sizes --shapes $REPO/.scratch/s34/changed34.csv -i 17 --precision tf32 --no-tune-cache --no-save > $OUT/fresh-sizes-changed.txt 2>&1; echo "sizes exit $?"
grep -E "^\s+[0-9]+x" $OUT/fresh-sizes-changed.txt | cut -c1-160
for t in memcheck racecheck synccheck; do timeout 40 compute-sanitizer --tool $t .venv/bin/python benchmarks/sanitize.py 4096 768 768 17 2>&1 | tail -1 | sed "s/^/$t 4096x768x768: /"; done > $OUT/sanitizers-192.txt 2>&1; cat $OUT/sanitizers-192.txt
timeout 150 .venv/bin/gemmbench sizes --shapes benchmarks/shapes -i 17 --precision tf32 --no-tune-cache --no-save > $OUT/set-17.txt 2>&1; echo "set exit $?"
tail -3 $OUT/set-17.txt | cut -c1-200
