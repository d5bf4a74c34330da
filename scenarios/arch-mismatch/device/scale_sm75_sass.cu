// gencode: -gencode=arch=compute_75,code=sm_75
// Machine code for compute capability 7.5 (Turing) and nothing else: no
// PTX for the driver to compile for a newer GPU.
#include "scale.cuh"
