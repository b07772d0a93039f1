#!/bin/bash
# session 43, call 4 (nvidia-h200): the whole GPU suite on the final tree and both tables.
set +e
source .device/env.sh
D=$OUT/c4; mkdir -p $D
/usr/bin/time -f "%e s" timeout 570 python3 -m pytest -m gpu -q -p no:randomly > $D/pytest-gpu-all.txt 2>&1
echo "exit $?"
grep -v "^\s*$" $D/pytest-gpu-all.txt | grep -v "^\.*\s*\[" | tail -15 | cut -c1-250
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
