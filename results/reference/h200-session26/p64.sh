# 64 x 128 tiles in pairs (K split in two, clusters of 2) against each shape's own choice and 128 x 128 in 4 parts
V="own:32;p64s6:32:BM=64,BN=128,KSPLIT=2,CLUSTER=2,PERSISTENT=0,STAGES=6;p64s4:32:BM=64,BN=128,KSPLIT=2,CLUSTER=2,PERSISTENT=0,STAGES=4;n4:32:BM=128,BN=128,KSPLIT=4,CLUSTER=1,PERSISTENT=1,STAGES=4"
python3 .scratch/exp.py 4096x128x4096,4096x64x4096,4096x16x4096,128x4096x4096,2048x128x8192,128x1024x4096,128x768x3072 3 bf16 "$V"
V16=$(echo "$V" | sed 's/:32/:33/g')
python3 .scratch/exp.py 4096x128x4096,4096x16x4096 3 fp16 "$V16"
