set -x
gemmbench sizes --shapes .scratch/changed.csv -i 32 -i 33 --precision bf16 --precision fp16 --no-tune-cache --no-save > $OUT/sizes-changed-16bit.txt 2>&1; echo "rc $?"
gemmbench sizes --shapes benchmarks/shapes/skinny.csv -i 32 -i 33 --precision bf16 --precision fp16 --no-tune-cache --no-save > $OUT/sizes-skinny-16bit.txt 2>&1; echo "rc $?"
for t in memcheck racecheck synccheck; do
  for s in "33 20 16384" "33 21 16384" "300 1000 4097"; do
    timeout 120 compute-sanitizer --tool $t --print-limit 5 python3 benchmarks/sanitize.py $s 30,31,32,33 2>&1 | tail -2
  done
done
python3 -m pytest -m gpu -q -x -p no:cacheprovider tests/test_half_gpu.py tests/test_half.py 2>&1 | tail -2
set +x
