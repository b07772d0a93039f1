// The BF16 GEMV path of rungs 30 and 32 (gemv16.cuh); a helper file the driver loads, not a rung.
#define BF16 1
#include "half.cuh"
#include "gemv16.cuh"
