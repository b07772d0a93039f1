#!/bin/bash
# session 39, call 3 (nvidia-h200-x2): GPU 0 the whole GPU suite (the specials test new in it); GPU 1 a new
# user's GPU path in a fresh Python 3.12 venv, then the NaN bit patterns through cvt.rna and the two-op rounding.
set +e
source .device/env.sh
D=$OUT/c3; mkdir -p $D
(
  export CUDA_VISIBLE_DEVICES=1
  s=$(date +%s)
  ( unset PYTHONPATH; WHEELS=".fresh/wheels .whl2" OUT=$D/fresh FRESH=/tmp/gemmbench-fresh timeout 200 bash benchmarks/fresh_venv.sh > $D/fresh-log.txt 2>&1 )
  echo "fresh venv exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
  timeout 60 python3 .scratch/s39/nanbits.py > $D/nanbits.txt 2>&1
) &
export CUDA_VISIBLE_DEVICES=0
s=$(date +%s)
timeout 560 python3 -m pytest -m gpu -q -p no:cacheprovider tests/ > $D/pytest-gpu-all.txt 2>&1
echo "pytest -m gpu exit $? in $(( $(date +%s) - s )) s" >> $D/summary.txt
wait
cat $D/summary.txt; tail -4 $D/pytest-gpu-all.txt; grep -E "^FAILED" $D/pytest-gpu-all.txt | head -20
tail -4 $D/fresh-log.txt; cat $D/nanbits.txt
gzip $D/pytest-gpu-all.txt
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
