python3 .scratch/s32/ab.py 4096x4096x4096,1024x1024x1024,512x512x512,2048x2048x2048,4096x16x4096,256x256x65536 3 3xtf32 18 .scratch/s32/oldsrc > $OUT/call2-ab18.txt 2>&1; tail -7 $OUT/call2-ab18.txt
