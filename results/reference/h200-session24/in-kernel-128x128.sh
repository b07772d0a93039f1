# rung 28's table choice against the in-kernel k-major loop at 128x128 tiles (L, KMAJOR_A=2, 16x8 a thread,
# 2 blocks an SM) in a few K splits, at the shapes still short of 0.95x SGEMM; 3 interleaved rounds
L=KMAJOR_A=2,BM=128,BN=128,TM=16,TN=8,MIN_BLOCKS=2,NUM_THREADS=128,BK=16,STAGES=4
v() { s=""; for k in "$@"; do s="$s;L$k:28:$L,SPLITS=$k"; done; echo "table:28$s"; }
python3 results/reference/h200-session19/exp.py 1024x1024x16384 3 fp32 "$(v 2 4 8)"
python3 results/reference/h200-session19/exp.py 2047x2047x2047 3 fp32 "$(v 1 2 3)"
python3 results/reference/h200-session19/exp.py 127x4096x4096 3 fp32 "$(v 4 6 8)"
python3 results/reference/h200-session19/exp.py 1000x1000x1000 3 fp32 "$(v 1 2 3)"
python3 results/reference/h200-session19/exp.py 256x256x65536 3 fp32 "$(v 16 32 64)"
python3 results/reference/h200-session19/exp.py 4096x127x4096 3 fp32 "$(v 4 6 8)"
