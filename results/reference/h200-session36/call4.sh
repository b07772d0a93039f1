# session 36, call 4 (nvidia-h200-x2): rung 17's tile tests after following B3D by N (call 3's 147 failures were
# the test's own B3D=1 at shapes whose N is not a multiple of 32: the map was refused)
source .device/env.sh
s=$(date +%s)
timeout 240 python3 -m pytest tests/test_tma_tiles_gpu.py -k rung_17 -q -p no:cacheprovider > $OUT/pytest-tiles17.txt 2>&1; echo "pytest exit $? after $(( $(date +%s) - s )) s"
tail -3 $OUT/pytest-tiles17.txt; grep -E "^FAILED" $OUT/pytest-tiles17.txt | head -5
