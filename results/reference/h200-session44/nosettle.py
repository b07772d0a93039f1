"""gemmbench with the warm-up's settle extension off (timing.SETTLE_SECONDS = 0): a scratch for one experiment."""
import sys
import gemmbench.timing
import gemmbench.gpu.timing as gpu_timing
gemmbench.timing.SETTLE_SECONDS = 0.0
gpu_timing.SETTLE_SECONDS = 0.0
from gemmbench.__main__ import main
sys.argv[0] = "gemmbench"
sys.exit(main())
