#!/bin/bash
# session 44, call C (nvidia-h200): the whole GPU suite on this tree (the sm_90a skip in one helper).
set +e
source .device/env.sh
D=$OUT/cC; mkdir -p $D
/usr/bin/time -f "%e s" timeout 560 python3 -m pytest -m gpu -q -p no:randomly > $D/pytest-gpu-all.txt 2>&1
echo "exit $?"
grep -v "^\s*$" $D/pytest-gpu-all.txt | grep -v "^\.*\s*\[" | tail -15 | cut -c1-250
cd $OUT && tar czf cC.tgz cC && rm -rf cC
