# session 35, call A (nvidia-h200): the whole GPU suite (the new resume test among it)
source .device/env.sh
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
timeout 540 python3 -m pytest -m gpu -q -p no:cacheprovider > $OUT/pytest-gpu-all.txt 2>&1; echo "pytest exit $?"; tail -4 $OUT/pytest-gpu-all.txt
grep -E "FAILED|resumed" $OUT/pytest-gpu-all.txt | head
