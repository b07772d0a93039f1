# new (this tree) against old (d5f4701 in .scratch/old): rung 32/33's own choice beside cuBLAS, twice each, alternating
S=64x64x131072,128x128x65536,256x256x65536,128x1024x4096,512x512x32768
for prec in bf16 fp16; do
  r=32; [ $prec = fp16 ] && r=33
  for rep in 1 2; do
    python3 .scratch/exp.py $S 3 $prec "new:$r" 2>&1 | grep -v precompiled
    (cd .scratch/old && PYTHONPATH=/tmp/site:$PWD python3 ../exp.py $S 3 $prec "old:$r" 2>&1 | grep -v precompiled)
  done
done
