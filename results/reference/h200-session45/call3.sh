#!/bin/bash
# session 45, call 3 (nvidia-h200): rung 17 over the set as the forty-fourth session ran it (stopped by its
# time limit), then resumed from its record with sizes --resume.
set +e
source .device/env.sh
D=$OUT/c3; mkdir -p $D
S="gemmbench sizes --shapes benchmarks/shapes -i 17 --precision tf32 --no-tune-cache --results-dir $D/set17"
/usr/bin/time -f "%e s" timeout -s TERM 200 $S > $D/set17-part1.txt 2>&1
echo "part1 exit $?"; tail -3 $D/set17-part1.txt
first=$(ls $D/set17/sizes-*.json | head -1)
/usr/bin/time -f "%e s" timeout 200 $S --resume $first > $D/set17-part2.txt 2>&1
echo "part2 exit $?"; tail -3 $D/set17-part2.txt
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
