for i in 1 2 3; do for s in 4096 8192; do
python3 -m gemmbench compare -i 32 -i 33 --precision bf16 --precision fp16 -m $s -n $s -k $s --no-save > $OUT/issue17-$s-run$i.txt 2>&1
echo "$s run $i: $(grep -E '^\s+(32|33) ' $OUT/issue17-$s-run$i.txt | awk '{print $1, $(NF-5), $(NF-4), $(NF-3), $(NF-2), $(NF-1), $NF}' | tr '\n' ' ')"
done; done
