# session 35, call C (nvidia-h200): where rung 17 and cuBLAS TF32 spend a call at its two shortest TF32 shapes
source .device/env.sh
M=gpu__time_duration.sum,smsp__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed
for shape in 4096x256x4096 128x11008x4096; do
  for tok in 0:tf32 17; do
    echo "== $tok $shape"
    timeout 120 ncu --clock-control none --cache-control none --metrics $M --csv --print-units base python3 benchmarks/ground_truth.py --launch $tok $shape 3 2>&1 | grep -v '^==PROF==' | python3 -c "
import csv,sys
rows=list(csv.reader(l for l in sys.stdin if l.startswith('\"')))
hdr=rows[0]; ix={h:i for i,h in enumerate(hdr)}
last={}
for r in rows[1:]:
    last.setdefault(r[ix['ID']],{'name':r[ix['Kernel Name']][:90]})[r[ix['Metric Name']]]=r[ix['Metric Value']]
for k in list(last)[-8:]:
    print(k, last[k])
"
  done
done > $OUT/ncu-tf32-short.txt 2>&1
cat $OUT/ncu-tf32-short.txt | cut -c1-600
