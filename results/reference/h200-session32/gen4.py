import subprocess, sys
lines = []
for R, prec, keep in ((32, "bf16", None), (33, "fp16", {"4097x4097x4097", "2048x3072x1024", "512x11008x4096", "5120x5120x5120", "6912x6912x6912"}), (26, "bf16", {"128x11008x4096", "128x14336x4096", "4352x4352x4352"}), (22, "bf16", {"4352x4352x4352", "5888x5888x5888"})):
    out = subprocess.run([sys.executable, ".scratch/s32/changed.py", str(R), "0.95", "0.95", "0.7", "all"], capture_output=True, text=True).stdout.splitlines()[1:]
    for l in out:
        shape, d = l.split(" ", 1); d = eval(d)
        if keep and shape not in keep: continue
        new = ",".join(f"{k}={v[1]}" for k, v in d.items())
        lines.append(f'python3 .scratch/exp.py {shape} 3 {prec} "cur:{R};rate:{R}:{new}" 2>&1 | grep -v precompiled >> $OUT/call4-rates-ab-{R}-{prec}.txt')
print("\n".join(lines))
print("grep -hE '^==|^   ' $OUT/call4-rates-ab-*.txt | cut -c1-60")
