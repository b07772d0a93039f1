# A new user's GPU path on a bare machine, then the whole GPU suite (thirty-first session)
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
.venv/bin/gemmbench sizes --shapes .scratch/s31/changed31.csv -i 32 -i 33 --precision bf16 --precision fp16 --no-tune-cache --no-save > $OUT/fresh-sizes-changed-16bit.txt 2>&1; echo "sizes changed 16-bit: rc $?, $(( $(date +%s) - t2 )) s"
.venv/bin/gemmbench info -i 32 -m 127 -n 4096 -k 4096 2>&1 | grep -i "tiles" | head -3 | cut -c1-300
