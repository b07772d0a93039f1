for t in memcheck racecheck synccheck; do
  for s in "127 255 511" "601 999 2049"; do
    echo "== $t $s"; /usr/bin/time -f "%e s" timeout 100 compute-sanitizer --tool $t --print-limit 5 python3 benchmarks/sanitize.py $s 22,23,24,25,26,27,30,31,32,33 2>&1 | grep -E "^rung|SUMMARY|rror|^[0-9.]+ s$"
  done
done > $OUT/sanitizers.txt 2>&1
echo "== memcheck 4000 4000 300 (persistent, several tiles a block)" >> $OUT/sanitizers.txt
/usr/bin/time -f "%e s" timeout 100 compute-sanitizer --tool memcheck --print-limit 5 python3 benchmarks/sanitize.py 4000 4000 300 22,26,32 2>&1 | grep -E "^rung|SUMMARY|rror|^[0-9.]+ s$" >> $OUT/sanitizers.txt
echo "== racecheck 4000 4000 300" >> $OUT/sanitizers.txt
/usr/bin/time -f "%e s" timeout 100 compute-sanitizer --tool racecheck --print-limit 5 python3 benchmarks/sanitize.py 4000 4000 300 32 2>&1 | grep -E "^rung|SUMMARY|rror|^[0-9.]+ s$" >> $OUT/sanitizers.txt
cat $OUT/sanitizers.txt
