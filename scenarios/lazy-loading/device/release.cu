// The kernel that releases the waiter: it sets the flag. It is alone in its
// file, so it is a library of its own, loaded on its own.

extern "C" __global__ void release(unsigned int *flag) {
  *(volatile unsigned int *)flag = 1;
  __threadfence_system();
}
