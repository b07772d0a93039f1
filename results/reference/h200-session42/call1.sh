#!/bin/bash
# session 42, call 1 (nvidia-h200-x2): the element-mapping refactor and the warp-shared NaN recomputation behind one
# vote. GPU 0: SASS and finite-input timing against main (and the refactor alone); GPU 1: the specials tests, the
# fallbacks, what an Inf costs now.
set +e
source .device/env.sh
D=$OUT/c1; mkdir -p $D; export D
S=.scratch/s42
(
  export CUDA_VISIBLE_DEVICES=0
  python3 $S/sass.py 18 1024x1024x1024 main=$S/main_src dedup=$S/dedup_src new=. > $D/sass18.txt 2>&1
  python3 $S/sass.py 17 4096x4096x4096 main=$S/main_src new=. > $D/sass17.txt 2>&1
  timeout 200 python3 $S/ab.py 18 1024x1024x1024,2048x2048x2048,127x4096x4096,512x512x512,4096x4096x4096 7 main=$S/main_src dedup=$S/dedup_src new=. > $D/ab18.txt 2>&1
  timeout 150 python3 $S/ab.py 17 4096x4096x4096,8192x8192x8192,128x11008x4096,1000x1000x1000,2048x14336x4096 5 main=$S/main_src new=. > $D/ab17.txt 2>&1
) &
(
  export CUDA_VISIBLE_DEVICES=1
  timeout 250 python3 -m pytest -m gpu -q -x tests/test_specials_gpu.py > $D/pytest-specials.txt 2>&1
  timeout 100 python3 -m pytest -m gpu -q tests/test_gpu.py -k "fallback" > $D/pytest-fallback.txt 2>&1
  timeout 120 python3 .scratch/s40/inf_cost.py 4096 4096 4096 > $D/inf-cost-4096.txt 2>&1
  timeout 60 python3 .scratch/s40/inf_cost.py 1024 1024 1024 > $D/inf-cost-1024.txt 2>&1
) &
wait
for f in sass18 sass17 ab18 ab17 inf-cost-4096 inf-cost-1024; do echo "### $f"; grep -v "^\s*$" $D/$f.txt | cut -c1-230 | tail -40; done
tail -3 $D/pytest-specials.txt $D/pytest-fallback.txt
gzip $D/*.sass
