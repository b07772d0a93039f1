import pycuda.autoinit
from gemmbench.rungs import get_spec
from gemmbench.gpu import compile as c
from gemmbench.gpu.clusters import max_active_clusters
spec = get_spec("gpu", 32).for_device((9, 0))
for k in (2, 3, 4, 5, 8):
    p = dict(spec.params_for(64, 4096, 4096, 132)); p.update(KSPLIT=k, CLUSTER=k, BM=64, BN=128, STAGES=6, PERSISTENT=0)
    print("cluster", k, "smem", spec.smem(p), "max active clusters", max_active_clusters(c.cubin(spec, (9, 0), p), "sgemm", k, 256, spec.smem(p)), flush=True)
