#!/bin/bash
# session 45, call 2 (nvidia-h200): the whole GPU suite on this tree.
set +e
source .device/env.sh
D=$OUT/c2; mkdir -p $D
/usr/bin/time -f "%e s" timeout 585 python3 -m pytest -q -m gpu -p no:cacheprovider > $D/pytest-gpu-all.txt 2>&1
echo "pytest exit $?"; tail -3 $D/pytest-gpu-all.txt
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
