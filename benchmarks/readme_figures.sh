#!/usr/bin/env bash
# The runs behind the README's H200 figures; everything lands in $OUT.
#   bash benchmarks/readme_figures.sh tables   # GPU tests, compare --all, the 3xTF32 K checks, the sweep
#   bash benchmarks/readme_figures.sh checks   # compute-sanitizer on rungs 12-15, ncu bank conflicts, ncu times
#   bash benchmarks/readme_figures.sh tune     # gemmbench tune on rungs 9, 12, 14, 15 at 4096^3
set -o pipefail
out=${OUT:-/tmp/gemmbench-out}; mkdir -p "$out"
part=${1:-tables}
export GEMMBENCH_CACHE_DIR="$out/cache"  # no tuned parameters from earlier runs: the figures are the defaults'

if [ "$part" = tables ]; then
{
timeout 300 python3 -m pytest -m gpu -q -rf --tb=line tests/test_gpu.py 2>&1 | tail -8
gemmbench compare --all --format markdown --results-dir "$out"
# 3xTF32 against cuBLAS SGEMM on the same inputs, at short, medium and long K
for k in 256 4096 16384; do
    gemmbench compare -i 15 -m 4096 -n 4096 -k "$k" --format markdown --no-save | grep -E '^\| (rung|0|15) '
done
gemmbench sizes --sweep 128..4096 --format markdown --plot "$out/sizes.png" --results-dir "$out"
} 2>&1 | tee "$out/tables.log"
fi

if [ "$part" = checks ]; then
{
for tool in memcheck racecheck synccheck; do
    for shape in "127 255 511" "1024 1024 1024"; do
        echo "== $tool $shape"
        compute-sanitizer --tool "$tool" python3 benchmarks/sanitize.py $shape 12,13,14,15 2>&1 | tail -6
    done
done
# shared-memory bank conflicts of one 4096^3 call (after 10 warm-up calls)
for rung in 11 12; do
    echo "== bank conflicts, rung $rung"
    ncu --clock-control none --launch-skip 10 --launch-count 1 \
        --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum \
        python3 benchmarks/ground_truth.py --launch "$rung" 4096 1 2>&1 | grep -E "l1tex|sgemm" | head -6
done
timeout 240 python3 benchmarks/ground_truth.py --rungs 0,12,13,14,15 --sizes 256,1024,4096 --calls 10 \
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
