#!/usr/bin/env bash
# The runs behind the README's H200 figures; everything lands in $OUT.
#   bash benchmarks/readme_figures.sh tests    # every GPU test
#   bash benchmarks/readme_figures.sh tables   # compare --all, the sweep 256..8192, a kernel file, info, profile
#   bash benchmarks/readme_figures.sh checks   # compute-sanitizer on rungs 12-18, ncu bank conflicts, ncu times
#   bash benchmarks/readme_figures.sh tune     # gemmbench tune on rungs 9, 12, 14, 15 at 4096^3
#   bash benchmarks/readme_figures.sh gpus     # two GPUs: compare --all --gpus all, tune on one and on both
#   bash benchmarks/readme_figures.sh half     # the 16-bit ladder: issue 17's medians of three, its sweep, sanitizers, ncu times
set -o pipefail
out=${OUT:-/tmp/gemmbench-out}; mkdir -p "$out"
part=${1:-tables}
# no tuned parameters from earlier runs: the figures are the defaults'; outside $OUT (files come back by count)
export GEMMBENCH_CACHE_DIR=/tmp/gemmbench-cache
records=/tmp/gemmbench-records

if [ "$part" = tests ]; then
    timeout 560 python3 -m pytest -m gpu -q -rfE --tb=line -p no:cacheprovider 2>&1 | tee "$out/pytest_gpu.log" | tail -40
fi

if [ "$part" = tables ]; then
{
gemmbench compare --all --format markdown --results-dir "$records"
gemmbench sizes --sweep 256..8192 --format markdown --plot "$out/sizes.png" --results-dir "$records"
# 3xTF32 against cuBLAS SGEMM on the same inputs, at short, medium and long K
for k in 256 4096 16384; do
    gemmbench compare -i 15 -i 18 -m 4096 -n 4096 -k "$k" --format markdown --no-save | grep -E '^\| *(rung|0|15|18) '
done
gemmbench compare --kernel-file examples/tiled_sgemm.cu -i 0 -i 12 -m 2048 -n 2048 -k 2048 --no-save
gemmbench diff results/reference/h200-compare-4096.json "$records"/compare-gpu-*.json --threshold 5%
} 2>&1 | tee "$out/tables.log"
cp "$records"/compare-gpu-*.json "$out/compare.json"; cp "$records"/sizes-gpu-*.json "$out/sizes.json"
fi

if [ "$part" = checks ]; then
{
for run in "memcheck 127 255 511" "racecheck 127 255 511" "synccheck 127 255 511" "memcheck 1024 1024 1024"; do
    set -- $run
    echo "== $run"
    timeout 150 compute-sanitizer --tool "$1" python3 benchmarks/sanitize.py "$2" "$3" "$4" 12,13,14,15,16,17,18,19 2>&1 | tail -10
done
# racecheck and synccheck at 1024^3 are slow: one process per rung and tool, side by side
for rung in 16 17 18 19; do for tool in racecheck synccheck; do
    timeout 420 compute-sanitizer --tool "$tool" python3 benchmarks/sanitize.py 1024 1024 1024 "$rung" \
        > "/tmp/sanitize-$tool-$rung.log" 2>&1 &
done; done; wait
tail -n 3 /tmp/sanitize-*.log
gemmbench info -m 4096 -n 4096 -k 4096
gemmbench asm -i 17 --sass | tail -25
gemmbench asm -i 19 --sass | tail -25
gemmbench profile -i 17 -m 4096 -n 4096 -k 4096 --plot "$out/roofline.png" --results-dir "$records"
timeout 300 python3 benchmarks/ground_truth.py --rungs 0,12,14,16,17,18,19 --sizes 1024,4096 --calls 10 \
    --json "$out/ground_truth.json"
} 2>&1 | tee "$out/checks.log"
fi

if [ "$part" = tune ]; then
{
for rung in 9 12 14 15; do
    gemmbench tune -i "$rung" --limit 40 --top 5 --format markdown --results-dir "$out"
done
gemmbench compare -i 9 -i 12 -i 14 -i 15 --format markdown --no-save  # now marked (tuned)
} 2>&1 | tee "$out/tune.log"
fi

if [ "$part" = half ]; then
{
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_half_gpu.py | tail -3
for i in 1 2 3; do  # the targets are medians of three runs
    gemmbench sizes --sweep 1024,2048 -i 30 -i 31 -i 32 -i 33 --precision bf16 --precision fp16 --no-tune-cache --no-save
done
for size in 4096 8192; do for i in 1 2 3; do  # at the power cap: rows take turns, half a second a round
    gemmbench compare -m $size -n $size -k $size -i 26 -i 32 -i 27 -i 33 --precision bf16 --precision fp16 \
        --no-tune-cache --rounds 3 --min-time 1.5 --no-save
done; done
gemmbench sizes --sweep 256..8192 --precision bf16 --precision fp16 --no-tune-cache --no-save --format markdown \
    --plot "$out/half-sizes.png" --overwrite
for shape in "127 256 511" "1024 1024 1024" "300 320 4097" "2048 2048 256"; do for tool in memcheck racecheck synccheck; do
    timeout 400 compute-sanitizer --tool "$tool" python3 benchmarks/sanitize.py $shape 24,25,26,27,30,31,32,33 \
        > "/tmp/sanitize-half-$tool-${shape// /x}.log" 2>&1 &
done; done; wait
grep -H SUMMARY /tmp/sanitize-half-*.log
timeout 300 python3 benchmarks/ground_truth.py --rungs 26,27,32,33 --sizes 1024,4096 --json "$out/ground_truth_half.json"
} 2>&1 | tee "$out/half.log"
fi

if [ "$part" = gpus ]; then
{
timeout 120 python3 -m pytest -m gpu -q -rfE --tb=short -p no:cacheprovider tests/test_workers.py tests/test_userkernel_gpu.py
gemmbench compare --all --gpus all --results-dir "$records"
gemmbench diff results/reference/h200-compare-4096.json "$records"/compare-gpu-*.json --threshold 5%
for gpus in "--gpu 0" "--gpus all"; do
    start=$(date +%s%N)
    gemmbench tune -i 12 --limit 40 --top 3 $gpus --results-dir "$records" | tail -12
    echo "tune $gpus: $(( ($(date +%s%N) - start) / 1000000 )) ms"
done
} 2>&1 | tee "$out/gpus.log"
fi
