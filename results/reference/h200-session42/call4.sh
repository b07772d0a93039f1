#!/bin/bash
# session 42, call 4 (nvidia-h200-x2): on the remade tables: the whole pytest -m gpu split over the two GPUs, then
# rungs 17 and 18 over the shape set (one per GPU), and a new user's GPU path in a fresh venv.
set +e
source .device/env.sh
D=$OUT/c4; mkdir -p $D
SPLIT="tests/test_specials_gpu.py tests/test_half_gpu.py tests/test_any_shape_gpu.py"
(
  export CUDA_VISIBLE_DEVICES=0
  timeout 250 python3 -m pytest -m gpu -q $(for f in $SPLIT; do echo --ignore=$f; done) > $D/pytest-gpu0.txt 2>&1
  echo "exit $?" >> $D/pytest-gpu0.txt
  timeout 230 gemmbench sizes --shapes benchmarks/shapes -i 17 --precision tf32 --no-tune-cache --results-dir $D/set17 > $D/set-17.txt 2>&1
) &
(
  export CUDA_VISIBLE_DEVICES=1
  timeout 250 python3 -m pytest -m gpu -q $SPLIT > $D/pytest-gpu1.txt 2>&1
  echo "exit $?" >> $D/pytest-gpu1.txt
  timeout 170 gemmbench sizes --shapes benchmarks/shapes -i 18 --precision 3xtf32 --no-tune-cache --results-dir $D/set18 > $D/set-18.txt 2>&1
  ( unset PYTHONPATH; WHEELS=".fresh/wheels .whl2" OUT=$D/fresh FRESH=/tmp/gemmbench-fresh timeout 100 bash benchmarks/fresh_venv.sh ) > $D/fresh-log.txt 2>&1
) &
wait
tail -n 2 $D/pytest-gpu0.txt $D/pytest-gpu1.txt
tail -n 4 $D/fresh-log.txt
ls $D/fresh 2>/dev/null
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
