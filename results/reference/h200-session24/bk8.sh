# rung 28 with 8 k a K tile (BK=8) in 3, 4 or 6 stages against its table choice (BK=16, 4 stages); 5 rounds at 1000^3, 3 elsewhere
python3 results/reference/h200-session19/exp.py 1000x1000x1000 5 fp32 "table:28;S1:28:SPLITS=1;S1B8s3:28:SPLITS=1,BK=8,STAGES=3;S1B8s4:28:SPLITS=1,BK=8,STAGES=4;S1B8s6:28:SPLITS=1,BK=8,STAGES=6;KS1B8s4:28:KMAJOR_A=1,SPLITS=1,BK=8,STAGES=4;S2B8s4:28:SPLITS=2,BK=8,STAGES=4;S3B8s4:28:BK=8,STAGES=4;S3B8s6:28:BK=8,STAGES=6"
for s in 2047x2047x2047 1024x1024x16384 127x4096x4096 256x256x65536 4096x4096x4096; do
python3 results/reference/h200-session19/exp.py $s 3 fp32 "table:28;B8s4:28:BK=8,STAGES=4;B8s6:28:BK=8,STAGES=6"
done
