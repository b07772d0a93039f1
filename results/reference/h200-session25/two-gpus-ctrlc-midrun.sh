# --gpus all on a two-GPU host: Ctrl-C as a terminal sends it (SIGINT to the whole group) and SIGTERM to the
# parent alone, each mid-run, once the record's journal holds a row from each GPU
nvidia-smi --query-gpu=index,name,power.limit --format=csv
summary() { python3 - "$1" <<'PY'
import json, glob, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(f))
    print(f.split("/")[-1], "complete", d["complete"], d.get("incomplete_reason"))
    for r in d["results"]:
        print(" ", r["shape"], r["name"], r["status"], "gpu", r.get("gpu"), "visits", len((r.get("notes") or {}).get("rounds") or []))
    print(" gpus:", {k: {kk: v[kk] for kk in v if kk in ("interrupted", "error", "name")} for k, v in d["environment"]["gpus"].items()})
PY
}
wait_rows() {  # until the journal in $1 holds rows of both GPUs (or 120 s)
  for i in $(seq 240); do
    j=$(ls $1/.*.journal 2>/dev/null | head -1)
    if [ -n "$j" ] && grep -Eq '"gpu": ?0[,}]' "$j" && grep -Eq '"gpu": ?1[,}]' "$j"; then echo "rows of both GPUs after $((i/2)) s"; return; fi
    sleep 0.5
  done; echo "no rows of both GPUs in 120 s"
}
go() {  # name signal target(group|parent) args...
  name=$1 sig=$2 target=$3; shift 3; d=$OUT/$name; mkdir -p $d
  echo "== $name: gemmbench $* ; $sig to the $target"
  setsid gemmbench "$@" --results-dir $d > $d/out.txt 2> $d/err.txt &
  pid=$!
  wait_rows $d; sleep 2
  if [ $target = group ]; then kill -$sig -- -$pid; else kill -$sig $pid; fi
  t0=$(date +%s.%N); wait $pid; rc=$?; t1=$(date +%s.%N)
  echo "exit $rc, $(python3 -c "print(round($t1-$t0,1))") s after the signal"
  echo "processes left:"; ps -eo pid,ppid,stat,etime,args | grep -E "gemmbench|multiprocessing" | grep -v grep; sleep 3; echo "3 s later:"; ps -eo pid,ppid,stat,etime,args | grep -E "gemmbench|multiprocessing" | grep -v grep; echo "tracebacks: $(grep -c Traceback $d/err.txt)"
  tail -6 $d/err.txt | cut -c1-200; head -30 $d/out.txt | cut -c1-160
  summary $d
}
S="-m 1024 -n 1024 -k 1024 -m 2048 -n 2048 -k 2048 -m 4096 -n 4096 -k 4096 -m 8192 -n 8192 -k 8192"
go ctrlc INT group compare --all --gpus all --format csv
