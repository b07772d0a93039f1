# A new user's GPU path on a bare machine: a copy of the tree, a fresh Python 3.12 venv, the README's first command.
set +e
W=$PWD/.fresh/wheels; W2=$PWD/.whl2; ls $W2
rm -rf /tmp/fresh && mkdir -p /tmp/fresh && tar -c --exclude=./.fresh --exclude=./.device --exclude=./.scratch --exclude=./.whl2 --exclude=./.git . | tar -x -C /tmp/fresh
cd /tmp/fresh
python3.12 --version
t0=$(date +%s)
python3.12 -m venv .venv
.venv/bin/pip install -q --no-index --find-links $W --find-links $W2 -e '.[cuda]'
t1=$(date +%s); echo "install: $((t1-t0)) s"
.venv/bin/gemmbench compare --all > $OUT/fresh-compare-all.txt 2>&1; rc=$?
t2=$(date +%s); echo "compare --all: rc $rc, $((t2-t1)) s"
grep -c ' PASS' $OUT/fresh-compare-all.txt; grep -c 'FAIL' $OUT/fresh-compare-all.txt || true
.venv/bin/gemmbench compare -i 28 -m 333 -n 555 -k 777 --rounds 3 --no-save > $OUT/fresh-compare-333.txt 2>&1; echo "rc $?"
grep -E '^ +(0|28) ' $OUT/fresh-compare-333.txt | cut -c1-150
t3=$(date +%s)
.venv/bin/gemmbench sizes --shapes benchmarks/shapes/skinny.csv -i 32 -i 33 --precision bf16 --precision fp16 --no-tune-cache --no-save > $OUT/fresh-sizes-skinny-16bit.txt 2>&1; echo "sizes skinny 16-bit: rc $?, $(( $(date +%s) - t3 )) s"
.venv/bin/gemmbench info -i 32 -m 256 -n 256 -k 65536 2>&1 | grep -i "split" | head -3 | cut -c1-250
