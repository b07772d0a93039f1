// The FP16 GEMV path of rungs 31 and 33 (gemv16.cuh); a helper file the driver loads, not a rung.
#define BF16 0
#include "half.cuh"
#include "gemv16.cuh"
