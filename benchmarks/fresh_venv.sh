#!/usr/bin/env bash
# A new user's GPU path, timed: a copy of this tree without .git or build
# outputs, a fresh venv, `pip install -e '.[cuda]'`, then `gemmbench compare
# --all`. Run it from the repository root on the GPU machine:
#
#     bash benchmarks/fresh_venv.sh                 # wheels from the package index
#     WHEELS="dir1 dir2" bash benchmarks/fresh_venv.sh   # offline: only these wheel folders
#
# PYTHON picks the interpreter (default python3.12). The compare table and its
# record go to $OUT (default /tmp/gemmbench-fresh-out); the copy is made in
# $FRESH (default /tmp/gemmbench-fresh), which is emptied first. Exit status:
# compare's (0 every row passed, 1 a row failed, 2 bad input or environment).
set -u -o pipefail
here=$PWD
out=${OUT:-/tmp/gemmbench-fresh-out}
fresh=${FRESH:-/tmp/gemmbench-fresh}
python=${PYTHON:-python3.12}
mkdir -p "$out"
rm -rf "$fresh" && mkdir -p "$fresh"
# the files a clone would have (not the ignored ones: venvs, wheels), less results/ (52 MB of past records)
if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard | grep -zv '^results/' | tar -c --null -T - | tar -x -C "$fresh"
else  # a copy without its .git: leave out what a clone would not have
    tar -c --exclude=./.git --exclude=./.venv --exclude=./.device --exclude=./.fresh --exclude=./.whl2 \
        --exclude=./.scratch --exclude=./.hypothesis --exclude=./results --exclude='*.egg-info' . | tar -x -C "$fresh"
fi
cd "$fresh" || exit 2

sources=(); for w in ${WHEELS:-}; do sources+=(--find-links "$(cd "$here" && realpath "$w")"); done
[ ${#sources[@]} -gt 0 ] && sources=(--no-index "${sources[@]}")

"$python" --version
t0=$(date +%s)
"$python" -m venv .venv || exit 2
.venv/bin/pip install -q "${sources[@]}" -e '.[cuda]' || exit 2
t1=$(date +%s)
echo "install: $((t1 - t0)) s"
.venv/bin/gemmbench compare --all --results-dir "$out" 2>&1 | tee "$out/compare-all.txt" | tail -4
rc=$?
t2=$(date +%s)
echo "compare --all: exit $rc, $((t2 - t1)) s, $(grep -c ' PASS' "$out/compare-all.txt") rows PASS," \
     "$(grep -c ' FAIL' "$out/compare-all.txt") FAIL"
exit $rc
