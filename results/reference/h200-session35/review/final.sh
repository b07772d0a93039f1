# session 35, review call (nvidia-h200): a new user's GPU path on the final tree, and the resume GPU test
set +e
s=$(date +%s); WHEELS=".fresh/wheels .whl2" OUT=$OUT/fresh timeout 200 bash benchmarks/fresh_venv.sh > $OUT/fresh.log 2>&1; echo "fresh_venv.sh exit $? in $(( $(date +%s) - s )) s"
grep -E "install:|compare --all:" $OUT/fresh.log
grep -E "^\s+(17|19|28|32|33) " $OUT/fresh/compare-all.txt | cut -c1-110
cd /tmp/gemmbench-fresh && .venv/bin/pip install -q --no-index --find-links $OLDPWD/.fresh/wheels --find-links $OLDPWD/.whl2 pytest hypothesis 2>&1 | tail -1
timeout 120 .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_gpu.py -k "resumed or tune_stores" 2>&1 | tail -2
