import sys, csv, glob, json
from gemmbench.rungs import get_spec
shapes = []
for f in sorted(glob.glob("benchmarks/shapes/*.csv")):
    for row in csv.reader(open(f)):
        try:
            t = tuple(int(x) for x in row[:3])
            if len(t) == 3: shapes.append(t)
        except ValueError: pass
shapes += [(s, s, s) for s in range(256, 8193, 256)] + [(s, s, s) for s in (1000, 1023, 1025, 2047, 2049, 3000, 4097, 5000, 6000, 7000)]
shapes += [(m, n, k) for m in (256, 384, 512, 768, 1024, 1536, 2048, 3072) for n in (768, 1024, 2048, 3072, 4096, 8192, 11008, 14336) for k in (768, 1024, 4096)]
shapes += [(m, n, k) for m in (4096, 8192, 16384, 32768, 65536) for n in (1, 16, 64, 100, 128) for k in (1024, 4096, 8192)]
shapes += [(m, n, k) for m in (3000, 6000, 10000, 20000) for n in (3000, 6000, 10000) for k in (512, 1024, 4096)]
shapes = list(dict.fromkeys(shapes))
out = {}
for R in (22, 24, 26, 28, 30, 32):
    if R == 28: continue
    spec = get_spec("gpu", R).for_device((9, 0))
    for s in shapes:
        out[f"{R} {'x'.join(map(str, s))}"] = spec.params_for(*s, 132)
json.dump(out, open(sys.argv[1], "w"))
