// gencode: -gencode=arch=compute_75,code=compute_75
// PTX for compute capability 7.5 and no machine code: the driver compiles
// it for whatever GPU loads it.
#include "scale.cuh"
