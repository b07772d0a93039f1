#!/usr/bin/env bash
# The README's test command, run N times on "2-core machines that another
# process keeps busy": each run gets its own copy of the checkout and its own
# pair of cores (taskset), and two spinning processes pinned to that same pair
# keep both cores busy for the whole run. Runs go side by side, as many at a
# time as the machine has core pairs. GPU tests skip (CUDA_VISIBLE_DEVICES=""),
# as on CI. Prints each run's closing line and a summary; exit 1 if any failed.
#   bash benchmarks/no_flake.sh 10
#   FIRST_PAIR=1 bash benchmarks/no_flake.sh 7     # leave cores 0-1 to other work
#   PYTHON=.venv/bin/python bash benchmarks/no_flake.sh 3   # the interpreter of a venv
set -u
python=${PYTHON:-python3}
runs=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/no-flake}; mkdir -p "$out"
first=${FIRST_PAIR:-0}
pairs=$(( $(nproc) / 2 - first )); [ "$pairs" -ge 1 ] || pairs=1
failed=0
run_one() {  # $1: run number, $2: first core of its pair
    local n=$1 a=$2 b=$(( $2 + 1 )) dir=/tmp/no-flake-run-$1
    rm -rf "$dir"; mkdir -p "$dir"
    (cd "$root" && tar --exclude=.git --exclude=.device --exclude='.wt-*' --exclude=results -cf - . ) | tar -C "$dir" -xf -
    cp -r "$root/results" "$dir/results"
    taskset -c "$a,$b" "$python" -c 'while True: pass' & local hog1=$!
    taskset -c "$a,$b" "$python" -c 'while True: pass' & local hog2=$!
    (cd "$dir" && CUDA_VISIBLE_DEVICES= GEMMBENCH_CACHE_DIR="$dir/.cache" PYTHONPATH="$dir${PYTHONPATH:+:$PYTHONPATH}" \
        taskset -c "$a,$b" "$python" -m pytest -q -p no:cacheprovider > "$out/run-$n.log" 2>&1)
    echo $? > "$out/run-$n.rc"
    kill "$hog1" "$hog2" 2>/dev/null; wait "$hog1" "$hog2" 2>/dev/null
}
n=1
while [ "$n" -le "$runs" ]; do
    for slot in $(seq 0 $(( pairs - 1 ))); do
        [ "$n" -le "$runs" ] || break
        run_one "$n" $(( 2 * (slot + first) )) &
        n=$(( n + 1 ))
    done
    wait
done
for n in $(seq 1 "$runs"); do
    rc=$(cat "$out/run-$n.rc")
    echo "run $n: exit $rc: $(tail -n 1 "$out/run-$n.log")"
    [ "$rc" -eq 0 ] || failed=$(( failed + 1 ))
done
echo "$(( runs - failed )) of $runs runs passed"
[ "$failed" -eq 0 ]
