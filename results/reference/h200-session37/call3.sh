# session 37, call 3 (nvidia-h200): the landed tree's tune tests on the GPU (real nvcc; --resume with the record's
# not_built list), ncu at 128 x 11008 x 4096 (rung 17 now loads B in one 3-D TMA load) beside cuBLAS TF32, and a new
# user's GPU path in a fresh Python 3.12 venv
source .device/env.sh
set +e
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
s=$(date +%s)
timeout 200 python3 -m pytest -m gpu tests/test_gpu.py -k "tune" -q -p no:cacheprovider > $OUT/pytest-gpu-tune.txt 2>&1
echo "pytest exit $? after $(( $(date +%s) - s )) s"; tail -2 $OUT/pytest-gpu-tune.txt
M=gpu__time_duration.sum,smsp__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y
for tok in 0:tf32 17; do
  echo "== $tok 128x11008x4096"
  timeout 120 ncu --clock-control none --cache-control none --metrics $M --csv --print-units base python3 benchmarks/ground_truth.py --launch $tok 128x11008x4096 3 2>&1 | grep -v '^==PROF==' | python3 -c "
import csv,sys
rows=list(csv.reader(l for l in sys.stdin if l.startswith('\"')))
hdr=rows[0]; ix={h:i for i,h in enumerate(hdr)}
last={}
for r in rows[1:]:
    last.setdefault(r[ix['ID']],{'name':r[ix['Kernel Name']][:90]})[r[ix['Metric Name']]]=r[ix['Metric Value']]
for k in list(last)[-8:]:
    print(k, last[k])
"
done > $OUT/ncu-128x11008x4096.txt 2>&1
cut -c1-420 $OUT/ncu-128x11008x4096.txt
( unset PYTHONPATH; WHEELS=".fresh/wheels .whl2" OUT=$OUT/fresh FRESH=/tmp/gemmbench-fresh timeout 200 bash benchmarks/fresh_venv.sh > $OUT/fresh-log.txt 2>&1; echo "fresh_venv.sh exit $?" >> $OUT/fresh-log.txt )
grep -E "install:|compare --all|exit" $OUT/fresh-log.txt
grep -E "^ *(0|17|18|19|28|32|33) " $OUT/fresh/compare-all.txt | cut -c1-150
cd $OUT && tar czf fresh.tgz fresh && rm -rf fresh
