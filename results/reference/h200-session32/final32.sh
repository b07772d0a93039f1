# A new user's GPU path on a bare machine, then the whole GPU suite (thirty-second session)
set +e
W=$PWD/.fresh/wheels; W2=$PWD/.whl2
rm -rf /tmp/fresh && mkdir -p /tmp/fresh && tar -c --exclude=./.fresh --exclude=./.device --exclude=./.whl2 --exclude=./.git . | tar -x -C /tmp/fresh
cd /tmp/fresh
python3.12 --version
t0=$(date +%s)
python3.12 -m venv .venv
.venv/bin/pip install -q --no-index --find-links $W --find-links $W2 -e '.[cuda]'
t1=$(date +%s); echo "install: $((t1-t0)) s"
.venv/bin/gemmbench compare --all > $OUT/fresh-compare-all.txt 2>&1; rc=$?
t2=$(date +%s); echo "compare --all: rc $rc, $((t2-t1)) s"
grep -c ' PASS' $OUT/fresh-compare-all.txt; grep -c 'FAIL' $OUT/fresh-compare-all.txt || true
.venv/bin/gemmbench sizes --shapes .scratch/s32/changed32.csv -i 32 -i 33 --precision bf16 --precision fp16 --no-tune-cache --no-save > $OUT/fresh-sizes-changed-16bit.txt 2>&1; echo "sizes changed 16-bit: rc $?, $(( $(date +%s) - t2 )) s"
.venv/bin/gemmbench info -i 32 -m 2048 -n 3072 -k 1024 2>&1 | grep -i "tiles" | head -3 | cut -c1-300
for t in memcheck racecheck synccheck; do for s in "2048 3072 1024" "512 11008 4096" "1000 127 1001"; do compute-sanitizer --tool $t .venv/bin/python benchmarks/sanitize.py $s 22,24,26,30,31,32,33 2>&1 | tail -1 | sed "s/^/$t $s: /"; done; done > $OUT/sanitizers-new-tiles.txt 2>&1; cat $OUT/sanitizers-new-tiles.txt
