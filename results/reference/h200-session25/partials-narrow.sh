# where the partials rule does not reach: shapes with N <= 256 or one row of 64 tiles; 128 x 128 tiles in 3 and 4 parts
# and 64 x 128 in 4 (two waves where 64 tiles) against rung 32's choice, BF16, 3 rounds
V="table:32;b3:32:KSPLIT=3,CLUSTER=1,BM=128,BN=128,STAGES=4,PERSISTENT=1;b4:32:KSPLIT=4,CLUSTER=1,BM=128,BN=128,STAGES=4,PERSISTENT=1;a4:32:KSPLIT=4,CLUSTER=1,BM=64,BN=128,STAGES=8,PERSISTENT=1"
python3 .scratch/exp.py 4096x16x4096,4096x64x4096,4096x128x4096,4096x256x4096,8192x64x8192,16x8192x8192,64x8192x8192,128x8192x8192,128x4096x4096 3 bf16 "$V"
