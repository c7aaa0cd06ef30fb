// The seed guide's first CUDA program (§3–4): add two vectors on the GPU and check the result.
// Build: nvcc -arch=sm_XY addKernel.cu -o addKernel && ./addKernel   (prints the GPU and the sums)
#include <cstdio>
#include <cuda_runtime.h>

__global__ void addKernel(int *c, const int *a, const int *b) {
    int i = threadIdx.x;
    c[i] = a[i] + b[i];
}

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_));     \
            return 1;                                                                \
        }                                                                            \
    } while (0)

int main() {
    const int n = 5;
    const int a[n] = {1, 2, 3, 4, 5};
    const int b[n] = {10, 20, 30, 40, 50};
    int c[n] = {0};
    int device = 0;
    cudaDeviceProp prop;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaGetDeviceProperties(&prop, device));
    printf("device %d: %s (compute capability %d.%d)\n", device, prop.name, prop.major, prop.minor);
    int *da = nullptr, *db = nullptr, *dc = nullptr;
    CHECK(cudaMalloc(&da, n * sizeof(int)));
    CHECK(cudaMalloc(&db, n * sizeof(int)));
    CHECK(cudaMalloc(&dc, n * sizeof(int)));
    CHECK(cudaMemcpy(da, a, n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, n * sizeof(int), cudaMemcpyHostToDevice));
    addKernel<<<1, n>>>(dc, da, db);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(c, dc, n * sizeof(int), cudaMemcpyDeviceToHost));
    printf("{1,2,3,4,5} + {10,20,30,40,50} = {%d,%d,%d,%d,%d}\n", c[0], c[1], c[2], c[3], c[4]);
    for (int i = 0; i < n; ++i) {
        if (c[i] != a[i] + b[i]) {
            fprintf(stderr, "wrong result at %d\n", i);
            return 1;
        }
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    printf("addKernel OK\n");
    return 0;
}
