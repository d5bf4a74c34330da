// missing-free, C++ variants: seed 000, example 1, made complete.
//
// The article's main() becomes a "model call" that the program makes again
// and again. The broken call is the article's code, with its missing
// cudaFree; the fixed call adds the cudaFree and nothing else.
//
// One change of scale: the article's buffer is 4 MiB, which would take some
// 20,000 calls to fill an 80 GB GPU. The calls here allocate 1/40 of the
// free memory each; the host round trip keeps the article's 1M floats.

#include <cstdlib>

#include "casebook.h"
#include "names.h"

using namespace casebook;

// The article's kernel.
static __global__ void myKernel(float *data, int size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) {
    data[i] *= 2.0f;
  }
}

static const int kCallsToFill = 40;        // as in the Rust variants
static const int kCalls = 48;              // more than the leak survives
static const size_t kArticleSize = 1024 * 1024;  // the article's `size`
static const size_t kPage = size_t(2) << 20;
static const size_t kTolerance = size_t(64) << 20;

typedef cudaError_t (*ModelCall)(const casebook_recorder *, size_t size);

// ANCHOR: broken
static cudaError_t model_call_broken(const casebook_recorder *r, size_t size) {
  size_t sample = size < kArticleSize ? size : kArticleSize;
  float *h_data = (float *)malloc(sample * sizeof(float));
  float *d_data;
  cudaError_t err = rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, size * sizeof(float)));
  if (err != cudaSuccess) {
    free(h_data);
    return err;
  }
  for (size_t i = 0; i < sample; ++i) h_data[i] = (float)i;
  rec(r, "cudaMemcpy HtoD", cudaMemcpy(d_data, h_data, sample * sizeof(float), cudaMemcpyHostToDevice));
  myKernel<<<(sample + 255) / 256, 256>>>(d_data, (int)sample);
  rec(r, "myKernel<<<>>>", cudaGetLastError());
  err = rec(r, "cudaMemcpy DtoH", cudaMemcpy(h_data, d_data, sample * sizeof(float), cudaMemcpyDeviceToHost));
  bool right = true;
  for (size_t i = 0; i < sample; ++i) right = right && h_data[i] == 2.0f * (float)i;
  check(r, names::MODEL_OUTPUT_IS_RIGHT, right);
  // **Error: Missing cudaFree(d_data)**
  free(h_data);
  return err;
}
// ANCHOR_END: broken

// ANCHOR: fixed
static cudaError_t model_call_fixed(const casebook_recorder *r, size_t size) {
  size_t sample = size < kArticleSize ? size : kArticleSize;
  float *h_data = (float *)malloc(sample * sizeof(float));
  float *d_data;
  cudaError_t err = rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, size * sizeof(float)));
  if (err != cudaSuccess) {
    free(h_data);
    return err;
  }
  for (size_t i = 0; i < sample; ++i) h_data[i] = (float)i;
  rec(r, "cudaMemcpy HtoD", cudaMemcpy(d_data, h_data, sample * sizeof(float), cudaMemcpyHostToDevice));
  myKernel<<<(sample + 255) / 256, 256>>>(d_data, (int)sample);
  rec(r, "myKernel<<<>>>", cudaGetLastError());
  err = rec(r, "cudaMemcpy DtoH", cudaMemcpy(h_data, d_data, sample * sizeof(float), cudaMemcpyDeviceToHost));
  bool right = true;
  for (size_t i = 0; i < sample; ++i) right = right && h_data[i] == 2.0f * (float)i;
  check(r, names::MODEL_OUTPUT_IS_RIGHT, right);
  rec(r, "cudaFree", cudaFree(d_data));  // FIX
  free(h_data);
  return err;
}
// ANCHOR_END: fixed

// ANCHOR: unchecked
// The broken call without the check after cudaMalloc: the call goes on with
// whatever cudaMalloc returned. d_data starts null, so that what a refused
// cudaMalloc leaves in it is known (the article leaves it unset, and an
// unset pointer holds whatever the stack held).
static cudaError_t model_call_unchecked(const casebook_recorder *r, size_t size) {
  size_t sample = size < kArticleSize ? size : kArticleSize;
  float *h_data = (float *)malloc(sample * sizeof(float));
  float *d_data = nullptr;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, size * sizeof(float)));
  for (size_t i = 0; i < sample; ++i) h_data[i] = (float)i;
  rec(r, "cudaMemcpy HtoD", cudaMemcpy(d_data, h_data, sample * sizeof(float), cudaMemcpyHostToDevice));
  myKernel<<<(sample + 255) / 256, 256>>>(d_data, (int)sample);
  rec(r, "myKernel<<<>>>", cudaGetLastError());
  cudaError_t err =
      rec(r, "cudaMemcpy DtoH", cudaMemcpy(h_data, d_data, sample * sizeof(float), cudaMemcpyDeviceToHost));
  bool right = true;
  for (size_t i = 0; i < sample; ++i) right = right && h_data[i] == 2.0f * (float)i;
  check(r, names::MODEL_OUTPUT_IS_RIGHT, right);
  // **Error: Missing cudaFree(d_data)**
  free(h_data);
  return err;
}
// ANCHOR_END: unchecked

// ANCHOR: fixed_unchecked
// The fixed call without the check after cudaMalloc, the same way.
static cudaError_t model_call_fixed_unchecked(const casebook_recorder *r, size_t size) {
  size_t sample = size < kArticleSize ? size : kArticleSize;
  float *h_data = (float *)malloc(sample * sizeof(float));
  float *d_data = nullptr;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, size * sizeof(float)));
  for (size_t i = 0; i < sample; ++i) h_data[i] = (float)i;
  rec(r, "cudaMemcpy HtoD", cudaMemcpy(d_data, h_data, sample * sizeof(float), cudaMemcpyHostToDevice));
  myKernel<<<(sample + 255) / 256, 256>>>(d_data, (int)sample);
  rec(r, "myKernel<<<>>>", cudaGetLastError());
  cudaError_t err =
      rec(r, "cudaMemcpy DtoH", cudaMemcpy(h_data, d_data, sample * sizeof(float), cudaMemcpyDeviceToHost));
  bool right = true;
  for (size_t i = 0; i < sample; ++i) right = right && h_data[i] == 2.0f * (float)i;
  check(r, names::MODEL_OUTPUT_IS_RIGHT, right);
  rec(r, "cudaFree", cudaFree(d_data));  // FIX
  free(h_data);
  return err;
}
// ANCHOR_END: fixed_unchecked

// The buffer of the two calls the program starts with: the article's 1M
// floats, or 3/5 of the free memory, so that what the first call leaks
// leaves too little for the second; and in the last form, the article's
// cudaDeviceReset between the two, which gives the leak back.
enum class FirstCalls { Article, ThreeFifthsOfFree, ThreeFifthsOfFreeResetBetween };

static int drive(const casebook_recorder *r, ModelCall call, FirstCalls first_calls) {
  // First the article's own claim: does the second call fail?
  size_t first_size = kArticleSize;
  if (first_calls != FirstCalls::Article) first_size = free_bytes(r) / 5 * 3 / sizeof(float);
  fact_text(r, names::FIRST_CALLS_BUFFER,
            first_calls == FirstCalls::Article ? "the article's 1M floats" : "3/5 of free memory");
  cudaError_t first, second;
  {
    Iteration it(r, "first call");
    first = call(r, first_size);
  }
  if (first_calls == FirstCalls::ThreeFifthsOfFreeResetBetween) {
    rec(r, "cudaDeviceReset (between the calls)", cudaDeviceReset());
  }
  {
    Iteration it(r, "second call");
    second = call(r, first_size);
  }
  // Whether the model call acts on cudaMalloc's result (the checked calls)
  // or goes on whatever it returned (the unchecked ones).
  fact(r, names::THE_CALL_CHECKS_CUDAMALLOC_S_RESULT, call == model_call_broken || call == model_call_fixed);
  fact(r, names::FIRST_CALL_OK, first == cudaSuccess);
  fact(r, names::SECOND_CALL_OK, first == cudaSuccess && second == cudaSuccess);
  // A refused cudaMalloc leaves its error as the runtime's last error until
  // something reads it; read it here, so the next launch's cudaGetLastError
  // reports that launch.
  cudaGetLastError();

  size_t baseline = free_bytes(r);
  size_t bytes = baseline / kCallsToFill / kPage * kPage;
  measure(r, names::FREE_BEFORE, (double)baseline);
  measure(r, names::BYTES_PER_CALL, (double)bytes);
  int completed = 0;
  cudaError_t err = cudaSuccess;
  for (int c = 0; c < kCalls; ++c) {
    Iteration it(r, "model call");
    err = call(r, bytes / sizeof(float));
    if (err != cudaSuccess) break;
    ++completed;
    point(r, names::FREE_BYTES, completed, (double)free_bytes(r));
  }
  measure(r, names::CALLS_COMPLETED, completed);
  if (err != cudaSuccess) {
    long long expected = (long long)(baseline / bytes);
    fact(r, names::FAILED_AFTER_FILL, llabs(completed - expected) <= 2);
    // Whether the failed call left a refusal or a fault: a fault (an access
    // through a pointer no cudaMalloc set) fails every call after it.
    fact(r, names::THE_PROCESS_SYNCHRONISES_AFTER_THE_FAILED_CALL,
         rec(r, "cudaDeviceSynchronize (after the failed call)", cudaDeviceSynchronize()) == cudaSuccess);
    return (int)err;
  }
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  size_t after = free_bytes(r);
  measure(r, names::FREE_AFTER, (double)after);
  check(r, names::FREE_MEMORY_RETURNS_TO_ITS_BASELINE, after + kTolerance >= baseline);
  return 0;
}

extern "C" int casebook_missing_free_broken_cpp(const casebook_recorder *r) {
  return drive(r, model_call_broken, FirstCalls::Article);
}

extern "C" int casebook_missing_free_fixed_cpp(const casebook_recorder *r) {
  return drive(r, model_call_fixed, FirstCalls::Article);
}

extern "C" int casebook_missing_free_unchecked_cpp(const casebook_recorder *r) {
  return drive(r, model_call_unchecked, FirstCalls::Article);
}

extern "C" int casebook_missing_free_fixed_unchecked_cpp(const casebook_recorder *r) {
  return drive(r, model_call_fixed_unchecked, FirstCalls::Article);
}

// ANCHOR: second_call_large
// The broken program, its first two calls each asking for 3/5 of the free
// memory, so that what the first leaks leaves too little for the second.
extern "C" int casebook_missing_free_second_call_large_cpp(const casebook_recorder *r) {
  return drive(r, model_call_broken, FirstCalls::ThreeFifthsOfFree);
}
// ANCHOR_END: second_call_large

// ANCHOR: second_call_large_freed
// The control of "this may fail due to remaining allocations":
// second_call_large with the article's call as written, its buffer freed.
extern "C" int casebook_missing_free_second_call_large_freed_cpp(const casebook_recorder *r) {
  return drive(r, model_call_fixed, FirstCalls::ThreeFifthsOfFree);
}
// ANCHOR_END: second_call_large_freed

// ANCHOR: second_call_large_reset
// The control of "if the context isn't reset between calls, remnants lead to
// errors": second_call_large with the article's cudaDeviceReset between the
// first two calls.
extern "C" int casebook_missing_free_second_call_large_reset_cpp(const casebook_recorder *r) {
  return drive(r, model_call_broken, FirstCalls::ThreeFifthsOfFreeResetBetween);
}
// ANCHOR_END: second_call_large_reset

// "Attempting to reuse the same memory for a second kernel call": the
// article's call, its buffer never freed, then a second launch of its
// kernel on that same d_data, the output copied back (each element doubled
// twice), then more device memory asked for. With `reset_between`, the
// article's cudaDeviceReset runs between the two kernel calls.
static int reuse(const casebook_recorder *r, bool reset_between) {
  const size_t size = kArticleSize;
  float *h_data = (float *)malloc(size * sizeof(float));
  float *d_data;
  cudaError_t err = rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, size * sizeof(float)));
  if (err != cudaSuccess) {
    free(h_data);
    return (int)err;
  }
  for (size_t i = 0; i < size; ++i) h_data[i] = (float)i;
  rec(r, "cudaMemcpy HtoD", cudaMemcpy(d_data, h_data, size * sizeof(float), cudaMemcpyHostToDevice));
  myKernel<<<(size + 255) / 256, 256>>>(d_data, (int)size);
  rec(r, "myKernel<<<>>>", cudaGetLastError());
  rec(r, "cudaMemcpy DtoH", cudaMemcpy(h_data, d_data, size * sizeof(float), cudaMemcpyDeviceToHost));
  // **Error: Missing cudaFree(d_data)**
  if (reset_between) {
    rec(r, "cudaDeviceReset (between the calls)", cudaDeviceReset());
  }
  // The second kernel call, on the same memory.
  myKernel<<<(size + 255) / 256, 256>>>(d_data, (int)size);
  cudaError_t launched = rec(r, "myKernel<<<>>> (second call, same d_data)", cudaGetLastError());
  cudaError_t back = rec(r, "cudaMemcpy DtoH (second call)",
                         cudaMemcpy(h_data, d_data, size * sizeof(float), cudaMemcpyDeviceToHost));
  bool right = launched == cudaSuccess && back == cudaSuccess;
  for (size_t i = 0; right && i < size; ++i) right = h_data[i] == 4.0f * (float)i;
  fact(r, names::A_SECOND_KERNEL_CALL_ON_THE_SAME_MEMORY_SUCCEEDS, right);
  free(h_data);
  float *more;
  cudaError_t served = rec(r, "cudaMalloc (more)", cudaMalloc((void **)&more, size * sizeof(float)));
  fact(r, names::MORE_DEVICE_MEMORY_IS_SERVED_AFTER_IT, served == cudaSuccess);
  cudaError_t first = launched;
  keep_first_error(first, back);
  keep_first_error(first, served);
  return (int)first;
}

// ANCHOR: reuse
extern "C" int casebook_missing_free_reuse_cpp(const casebook_recorder *r) {
  return reuse(r, false);
}
// ANCHOR_END: reuse

// ANCHOR: reuse_after_reset
extern "C" int casebook_missing_free_reuse_after_reset_cpp(const casebook_recorder *r) {
  return reuse(r, true);
}
// ANCHOR_END: reuse_after_reset
