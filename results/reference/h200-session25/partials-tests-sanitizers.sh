set -x
python3 -m pytest -m gpu -q -x tests/test_half_gpu.py tests/test_half.py 2>&1 | tail -3
for t in memcheck racecheck synccheck; do
  for s in "127 255 2051" "33 200 4097"; do
    compute-sanitizer --tool $t --print-limit 5 python3 benchmarks/sanitize.py $s 30,31,32,33 2>&1 | tail -2
  done
done
set +x
bash .scratch/cmpsplit.sh 2>&1 | grep -v "^precompiled" | sed 's/  rounds.*//' | cut -c1-150
