# session 34, call 2: rung 17's new candidates verified at odd shapes, then its table remade with the command stored in it
set +e
source .device/env.sh >/dev/null
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py -k "192_row_tiles" > $OUT/call2-pytest-new-tiles.txt 2>&1; rc=$?
echo "pytest exit $rc"; tail -3 $OUT/call2-pytest-new-tiles.txt
if [ $rc -ne 0 ]; then exit 1; fi
CMD=$(python3 -c "import json;print(json.load(open('gemmbench/rungs/tf32_tma_ws_h200.json'))['command'])")
echo "$CMD"
start=$(date +%s)
timeout 420 $CMD > $OUT/call2-tune17.txt 2>&1; echo "tune exit $? in $(( $(date +%s) - start )) s"
tail -5 $OUT/call2-tune17.txt
cp gemmbench/rungs/tf32_tma_ws_h200.json $OUT/
