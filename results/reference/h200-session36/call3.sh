# session 36, call 3 (nvidia-h200-x2): the whole GPU suite on GPU 0 and, beside it on GPU 1, a new user's
# GPU path (a fresh Python 3.12 venv from the carried wheels, then compare --all)
set +e
( export CUDA_VISIBLE_DEVICES=1; WHEELS=".fresh/wheels .whl2" OUT=$OUT/fresh FRESH=/tmp/gemmbench-fresh timeout 200 bash benchmarks/fresh_venv.sh > $OUT/fresh-log.txt 2>&1; echo "fresh_venv.sh exit $?" >> $OUT/fresh-log.txt ) &
source .device/env.sh
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
s=$(date +%s)
CUDA_VISIBLE_DEVICES=0 timeout 540 python3 -m pytest -m gpu -q -p no:cacheprovider > $OUT/pytest-gpu-all.txt 2>&1; echo "pytest exit $? after $(( $(date +%s) - s )) s"
tail -4 $OUT/pytest-gpu-all.txt
grep -E "FAILED|ERROR" $OUT/pytest-gpu-all.txt | head
wait
cat $OUT/fresh-log.txt | tail -8
