# session 34, call 3 (nvidia-h200-x2): rung 17's table remade with the command stored in it, shared over both GPUs
set +e
source .device/env.sh >/dev/null
nvidia-smi -L
CMD="$(python3 -c "import json;print(json.load(open('gemmbench/rungs/tf32_tma_ws_h200.json'))['command'])") --gpus all"
echo "$CMD"
start=$(date +%s)
timeout 575 $CMD > $OUT/call3-tune17.txt 2>&1; echo "tune exit $? in $(( $(date +%s) - start )) s"
tail -4 $OUT/call3-tune17.txt | cut -c1-300
cp gemmbench/rungs/tf32_tma_ws_h200.json $OUT/
