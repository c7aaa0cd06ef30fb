// cudaup verify: the CMake project's program. A kernel, and a call into each library CMake
// linked it with (CUDA::cudart, CUDA::cuda_driver, CUDA::cublas, ...). Prints `cmake-check OK`.
#include <cuda_runtime.h>

#include <cstdio>

#ifdef HAVE_CUDA_DRIVER
#include <cuda.h>
#endif
#ifdef HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#ifdef HAVE_CUFFT
#include <cufft.h>
#endif
#ifdef HAVE_CURAND
#include <curand.h>
#endif
#ifdef HAVE_CUSPARSE
#include <cusparse.h>
#endif
#ifdef HAVE_CUSOLVER
#include <cusolverDn.h>
#endif
#ifdef HAVE_NVRTC
#include <nvrtc.h>
#endif

__global__ void square(int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * v[i];
}

#define CHECK(call)                                                   \
  do {                                                                \
    long long rc = static_cast<long long>(call);                      \
    if (rc != 0) {                                                    \
      std::printf("%s returned %lld\n", #call, rc);                   \
      return 1;                                                       \
    }                                                                 \
  } while (0)

int main() {
  const int n = 256;
  int h[n];
  for (int i = 0; i < n; ++i) h[i] = i;
  int* d = nullptr;
  CHECK(cudaMalloc(&d, sizeof h));
  CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  square<<<1, n>>>(d, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d));
  for (int i = 0; i < n; ++i)
    if (h[i] != i * i) {
      std::printf("square(%d) = %d\n", i, h[i]);
      return 1;
    }
#ifdef HAVE_CUDA_DRIVER
  int drv = 0;
  CHECK(cuDriverGetVersion(&drv));
#endif
#ifdef HAVE_CUBLAS
  cublasHandle_t blas;
  CHECK(cublasCreate(&blas));
  CHECK(cublasDestroy(blas));
#endif
#ifdef HAVE_CUFFT
  cufftHandle plan;
  CHECK(cufftPlan1d(&plan, 64, CUFFT_C2C, 1));
  CHECK(cufftDestroy(plan));
#endif
#ifdef HAVE_CURAND
  curandGenerator_t gen;
  CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT));
  CHECK(curandDestroyGenerator(gen));
#endif
#ifdef HAVE_CUSPARSE
  cusparseHandle_t sp;
  CHECK(cusparseCreate(&sp));
  CHECK(cusparseDestroy(sp));
#endif
#ifdef HAVE_CUSOLVER
  cusolverDnHandle_t dn;
  CHECK(cusolverDnCreate(&dn));
  CHECK(cusolverDnDestroy(dn));
#endif
#ifdef HAVE_NVRTC
  int major = 0, minor = 0;
  CHECK(nvrtcVersion(&major, &minor));
#endif
  std::printf("cmake-check OK\n");
  return 0;
}
