#!/bin/bash
# session 38, call 2: cuBLAS TF32 against rung 17, SASS with per-instruction counts (ncu SourceCounters)
source .device/env.sh
D=$OUT/c2; mkdir -p $D
M="sm__cycles_elapsed.max,smsp__inst_executed.sum,lts__t_bytes.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_op_global_st.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_write.sum,dram__bytes_read.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_shared_ld.sum"
for shape in 4096x4096x4096 128x11008x4096; do
  for tok in 0:tf32 17; do
    n=${tok/:/_}-$shape
    timeout 200 ncu --kernel-name regex:"xmma|sgemm" --launch-skip 3 --launch-count 1 --section SourceCounters --metrics $M \
      -o $D/$n python3 benchmarks/ground_truth.py --launch $tok $shape 2 > $D/$n.log 2>&1
    ncu --import $D/$n.ncu-rep --page details --csv > $D/$n-details.csv 2>&1
    ncu --import $D/$n.ncu-rep --page source --print-source sass --csv > $D/$n-sass.csv 2>&1
    ncu --import $D/$n.ncu-rep --page raw --csv --metrics $M > $D/$n-raw.csv 2>&1
    rm -f $D/$n.ncu-rep
    echo "$n: $(wc -l < $D/$n-sass.csv) sass lines"; tail -3 $D/$n.log
  done
done
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
