#!/bin/bash
# session 43, call 1 (nvidia-h200): where a tune's time goes (cProfile, rung 17 at 5 shapes); the element mapping +
# vote-per-sum NaN recomputation (new_src) against main on finite inputs, and what an Inf costs on it.
set +e
source .device/env.sh
D=$OUT/c1; mkdir -p $D
S=.scratch/s43
nproc; python3 -c "import os; print(os.cpu_count())"
/usr/bin/time -f "tune %e s" timeout 200 python3 -m cProfile -o $D/prof17.out -m gemmbench tune -i 17 --shapes $S/prof.csv \
  --table /tmp/t17.json --overwrite --no-tune-cache --budget 0.03 --warmup 0.01 --no-save > $D/tune17.txt 2>&1
tail -4 $D/tune17.txt
python3 -c "
import pstats; p=pstats.Stats('$D/prof17.out'); p.sort_stats('cumulative').print_stats(45)" > $D/prof17-cum.txt 2>&1
python3 -c "
import pstats; p=pstats.Stats('$D/prof17.out'); p.sort_stats('tottime').print_stats(30)" > $D/prof17-tot.txt 2>&1
timeout 150 python3 $S/ab.py 18 1024x1024x1024,2048x2048x2048,127x4096x4096,512x512x512,128x4096x2048 7 main=. new=$S/new_src > $D/ab18.txt 2>&1
TREE=$S/new_src timeout 90 python3 $S/inf_cost.py 1024 1024 1024 > $D/inf-cost-1024.txt 2>&1
for f in ab18 inf-cost-1024; do echo "### $f"; grep -v "^\s*$" $D/$f.txt | cut -c1-230 | tail -30; done
head -70 $D/prof17-cum.txt | cut -c1-200
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
