// cudaup verify: one real call into each library of the toolkit, checked against the CPU.
//
// Built by `cudaup verify` with the toolkit's nvcc, with -DHAVE_<LIB> and -l<lib> for every
// library the toolkit has, and run once per GPU (CUDA_VISIBLE_DEVICES picks it). Prints one line
// per library:
//   RESULT {"lib":"cublas","ok":true,"detail":"...","file":"/path/of/the/loaded/library.so"}
// and `DONE` last. A library whose call fails says why in `detail`; the others still run.

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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
#ifdef HAVE_CUDNN
#include <cudnn.h>
#endif
#ifdef HAVE_NVRTC
#include <cuda.h>
#include <nvrtc.h>
#endif
#ifdef HAVE_NVJITLINK
#include <nvJitLink.h>
#endif
#ifdef HAVE_NPP
#include <npps.h>
#endif
#ifdef HAVE_NVJPEG
#include <nvjpeg.h>
#endif
#ifdef HAVE_CUPTI
#include <cupti.h>
#endif
#ifdef HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif
#ifdef HAVE_NVML
#include <nvml.h>
#endif
#ifdef HAVE_PROFILER
#include <cuda_profiler_api.h>
#endif

namespace {

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      o += ' ';
    } else {
      o += c;
    }
  }
  return o;
}

// The file the dynamic loader mapped for the library holding `symbol`.
std::string file_of(const void* symbol) {
  Dl_info info;
  if (symbol != nullptr && dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return "";
}

void report(const char* lib, bool ok, const std::string& detail, const void* symbol) {
  std::printf("RESULT {\"lib\":\"%s\",\"ok\":%s,\"detail\":\"%s\",\"file\":\"%s\"}\n", lib,
              ok ? "true" : "false", json_escape(detail).c_str(),
              json_escape(file_of(symbol)).c_str());
  std::fflush(stdout);
}

std::string fmt(const char* f, double a = 0, double b = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

// A failed call: "<what> returned <code>".
struct Failure {
  std::string what;
};

#define TRY(call)                                                     \
  do {                                                                \
    long long _rc = static_cast<long long>(call);                     \
    if (_rc != 0) throw Failure{std::string(#call) + " returned " +   \
                                std::to_string(_rc)};                 \
  } while (0)

// Deterministic values in [-1, 1).
float value(int i) { return static_cast<float>((i * 7919 % 2003) / 1001.5 - 1.0); }

template <typename T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(size_t n) { TRY(cudaMalloc(&ptr, n * sizeof(T))); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

template <typename F>
void run(const char* lib, const void* symbol, F body) {
  try {
    std::string detail = body();
    report(lib, true, detail, symbol);
  } catch (const Failure& f) {
    report(lib, false, f.what, symbol);
  }
}

std::string check_close(double err, double tol, const std::string& what) {
  if (!(err <= tol)) {
    throw Failure{what + fmt(": max rel. error %.2e exceeds %.0e", err, tol)};
  }
  return what + fmt(" matches the CPU (max rel. error %.1e)", err);
}

#ifdef HAVE_NVRTC
const char* kSaxpy =
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

// Compiles kSaxpy with NVRTC: PTX for `compute_XY` when `ptx`, else a CUBIN for `sm_XY`.
std::vector<char> nvrtc_compile(int major, int minor, bool ptx) {
  nvrtcProgram prog;
  TRY(nvrtcCreateProgram(&prog, kSaxpy, "saxpy.cu", 0, nullptr, nullptr));
  std::string arch = std::string(ptx ? "--gpu-architecture=compute_" : "--gpu-architecture=sm_") +
                     std::to_string(major) + std::to_string(minor);
  const char* opts[] = {arch.c_str()};
  nvrtcResult rc = nvrtcCompileProgram(prog, 1, opts);
  if (rc != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog, &log[0]);
    nvrtcDestroyProgram(&prog);
    throw Failure{"nvrtcCompileProgram: " + std::string(nvrtcGetErrorString(rc)) + ": " + log};
  }
  size_t n = 0;
  std::vector<char> out;
  if (ptx) {
    TRY(nvrtcGetPTXSize(prog, &n));
    out.resize(n);
    TRY(nvrtcGetPTX(prog, out.data()));
  } else {
    TRY(nvrtcGetCUBINSize(prog, &n));
    out.resize(n);
    TRY(nvrtcGetCUBIN(prog, out.data()));
  }
  TRY(nvrtcDestroyProgram(&prog));
  return out;
}

// Loads `image` through the driver API into the current context and runs saxpy on the GPU.
std::string launch_saxpy(const void* image) {
  const int n = 4096;
  const float a = 2.5f;
  std::vector<float> x(n), y(n), want(n);
  for (int i = 0; i < n; ++i) {
    x[i] = value(i);
    y[i] = value(i + n);
    want[i] = a * x[i] + y[i];
  }
  CUmodule module;
  CUfunction fn;
  TRY(cuModuleLoadData(&module, image));
  TRY(cuModuleGetFunction(&fn, module, "saxpy"));
  DeviceBuffer<float> dx(n), dy(n);
  TRY(cudaMemcpy(dx.ptr, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  TRY(cudaMemcpy(dy.ptr, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  float aa = a;
  int nn = n;
  void* args[] = {&aa, &dx.ptr, &dy.ptr, &nn};
  TRY(cuLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  TRY(cuCtxSynchronize());
  TRY(cudaMemcpy(y.data(), dy.ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
  TRY(cuModuleUnload(module));
  double err = 0;
  for (int i = 0; i < n; ++i) err = std::fmax(err, std::fabs(y[i] - want[i]));
  return check_close(err / 3.5, 1e-6, "saxpy (4096 floats) launched with cuLaunchKernel");
}
#endif

}  // namespace

int main() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    report("cudart", false,
           std::string("cudaGetDeviceCount: ") + (e == cudaSuccess ? "no device" : cudaGetErrorString(e)),
           reinterpret_cast<const void*>(&cudaGetDeviceCount));
    std::printf("DONE\n");
    return 1;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  const int major = prop.major, minor = prop.minor;

  run("cudart", reinterpret_cast<const void*>(&cudaRuntimeGetVersion), [&] {
    int rt = 0, drv = 0;
    TRY(cudaRuntimeGetVersion(&rt));
    TRY(cudaDriverGetVersion(&drv));
    const int n = 1 << 16;
    std::vector<float> h(n), back(n);
    for (int i = 0; i < n; ++i) h[i] = value(i);
    DeviceBuffer<float> d(n);
    TRY(cudaMemcpy(d.ptr, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(back.data(), d.ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
    if (std::memcmp(h.data(), back.data(), n * sizeof(float)) != 0) throw Failure{"a round trip through device memory changed the bytes"};
    return std::string(prop.name) + fmt(", compute capability %.0f.", major) + std::to_string(minor) +
           ": runtime " + std::to_string(rt) + ", driver " + std::to_string(drv) +
           ", 256 KiB round trip through device memory intact";
  });

#ifdef HAVE_CUBLAS
  run("cublas", reinterpret_cast<const void*>(&cublasCreate_v2), [&] {
    const int n = 64;
    std::vector<float> A(n * n), B(n * n), C(n * n);
    for (int i = 0; i < n * n; ++i) {
      A[i] = value(i);
      B[i] = value(i + 17);
    }
    cublasHandle_t h;
    TRY(cublasCreate(&h));
    DeviceBuffer<float> dA(n * n), dB(n * n), dC(n * n);
    TRY(cudaMemcpy(dA.ptr, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dB.ptr, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
    const float one = 1.0f, zero = 0.0f;
    TRY(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA.ptr, n, dB.ptr, n, &zero, dC.ptr, n));
    TRY(cudaMemcpy(C.data(), dC.ptr, C.size() * 4, cudaMemcpyDeviceToHost));
    TRY(cublasDestroy(h));
    double err = 0, scale = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double ref = 0;
        for (int k = 0; k < n; ++k) ref += double(A[i + k * n]) * B[k + j * n];
        err = std::fmax(err, std::fabs(ref - C[i + j * n]));
        scale = std::fmax(scale, std::fabs(ref));
      }
    return check_close(err / scale, 1e-5, "SGEMM 64x64x64");
  });
#endif

#ifdef HAVE_CUFFT
  run("cufft", reinterpret_cast<const void*>(&cufftPlan1d), [&] {
    const int n = 256;
    std::vector<cufftComplex> x(n), X(n), back(n);
    for (int i = 0; i < n; ++i) x[i] = make_cuComplex(value(i), value(i + 5));
    DeviceBuffer<cufftComplex> d(n);
    TRY(cudaMemcpy(d.ptr, x.data(), n * sizeof(cufftComplex), cudaMemcpyHostToDevice));
    cufftHandle plan;
    TRY(cufftPlan1d(&plan, n, CUFFT_C2C, 1));
    TRY(cufftExecC2C(plan, d.ptr, d.ptr, CUFFT_FORWARD));
    TRY(cudaMemcpy(X.data(), d.ptr, n * sizeof(cufftComplex), cudaMemcpyDeviceToHost));
    TRY(cufftExecC2C(plan, d.ptr, d.ptr, CUFFT_INVERSE));
    TRY(cudaMemcpy(back.data(), d.ptr, n * sizeof(cufftComplex), cudaMemcpyDeviceToHost));
    TRY(cufftDestroy(plan));
    double err = 0, scale = 0, rerr = 0;
    for (int k = 0; k < n; ++k) {
      double re = 0, im = 0;
      for (int t = 0; t < n; ++t) {
        double ang = -2.0 * M_PI * double(k) * t / n;
        re += x[t].x * std::cos(ang) - x[t].y * std::sin(ang);
        im += x[t].x * std::sin(ang) + x[t].y * std::cos(ang);
      }
      err = std::fmax(err, std::hypot(re - X[k].x, im - X[k].y));
      scale = std::fmax(scale, std::hypot(re, im));
      rerr = std::fmax(rerr, std::hypot(back[k].x / n - x[k].x, back[k].y / n - x[k].y));
    }
    check_close(rerr, 1e-5, "inverse");
    return check_close(err / scale, 1e-5, "C2C FFT of 256 points (forward, then inverse back to the input)");
  });
#endif

#ifdef HAVE_CURAND
  run("curand", reinterpret_cast<const void*>(&curandCreateGenerator), [&] {
    const size_t n = 1 << 20;
    curandGenerator_t g, host;
    TRY(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    TRY(curandSetPseudoRandomGeneratorSeed(g, 1234ULL));
    DeviceBuffer<float> d(n);
    TRY(curandGenerateUniform(g, d.ptr, n));
    std::vector<float> u(n);
    TRY(cudaMemcpy(u.data(), d.ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
    TRY(curandDestroyGenerator(g));
    double sum = 0;
    for (float v : u) {
      if (!(v > 0.0f && v <= 1.0f)) throw Failure{"curandGenerateUniform gave a value outside (0, 1]"};
      sum += v;
    }
    double mean = sum / n;
    if (std::fabs(mean - 0.5) > 0.002) throw Failure{fmt("the mean of 2^20 uniform floats is %.4f, not 0.5", mean)};
    // The same generator on the CPU.
    const size_t m = 4096;
    std::vector<float> h(m);
    TRY(curandCreateGeneratorHost(&host, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    TRY(curandSetPseudoRandomGeneratorSeed(host, 1234ULL));
    TRY(curandGenerateUniform(host, h.data(), m));
    TRY(curandDestroyGenerator(host));
    size_t same = 0;
    for (size_t i = 0; i < m; ++i) same += (h[i] == u[i]);
    return fmt("2^20 Philox uniform floats in (0, 1], mean %.4f; ", mean) +
           (same == m ? std::string("the first 4096 equal the CPU generator's")
                      : fmt("%.0f of the first 4096 equal the CPU generator's", double(same)));
  });
#endif

#ifdef HAVE_CUSPARSE
  run("cusparse", reinterpret_cast<const void*>(&cusparseCreate), [&] {
    // The tridiagonal (-1, 2, -1) matrix of order n in CSR, times x.
    const int n = 1000;
    std::vector<int> rows(n + 1), cols;
    std::vector<float> vals, x(n), y(n, 0.0f);
    for (int i = 0; i < n; ++i) {
      rows[i] = static_cast<int>(cols.size());
      for (int j = i - 1; j <= i + 1; ++j)
        if (j >= 0 && j < n) {
          cols.push_back(j);
          vals.push_back(j == i ? 2.0f : -1.0f);
        }
      x[i] = value(i);
    }
    rows[n] = static_cast<int>(cols.size());
    const int nnz = rows[n];
    DeviceBuffer<int> dr(n + 1), dc(nnz);
    DeviceBuffer<float> dv(nnz), dx(n), dy(n);
    TRY(cudaMemcpy(dr.ptr, rows.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dc.ptr, cols.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dv.ptr, vals.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dx.ptr, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    TRY(cudaMemset(dy.ptr, 0, n * sizeof(float)));
    cusparseHandle_t h;
    TRY(cusparseCreate(&h));
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t vx, vy;
    TRY(cusparseCreateCsr(&A, n, n, nnz, dr.ptr, dc.ptr, dv.ptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    TRY(cusparseCreateDnVec(&vx, n, dx.ptr, CUDA_R_32F));
    TRY(cusparseCreateDnVec(&vy, n, dy.ptr, CUDA_R_32F));
    const float one = 1.0f, zero = 0.0f;
    size_t bytes = 0;
    TRY(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_32F,
                                CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    DeviceBuffer<char> work(bytes > 0 ? bytes : 1);
    TRY(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_32F,
                     CUSPARSE_SPMV_ALG_DEFAULT, work.ptr));
    TRY(cudaMemcpy(y.data(), dy.ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
    TRY(cusparseDestroySpMat(A));
    TRY(cusparseDestroyDnVec(vx));
    TRY(cusparseDestroyDnVec(vy));
    TRY(cusparseDestroy(h));
    double err = 0, scale = 0;
    for (int i = 0; i < n; ++i) {
      double ref = 2.0 * x[i] - (i > 0 ? x[i - 1] : 0.0) - (i + 1 < n ? x[i + 1] : 0.0);
      err = std::fmax(err, std::fabs(ref - y[i]));
      scale = std::fmax(scale, std::fabs(ref));
    }
    return check_close(err / scale, 1e-5, "CSR SpMV (1000x1000 tridiagonal)");
  });
#endif

#ifdef HAVE_CUSOLVER
  run("cusolver", reinterpret_cast<const void*>(&cusolverDnCreate), [&] {
    // Solve A x = b by LU (getrf + getrs) for a diagonally dominant A; check A x = b on the CPU.
    const int n = 64;
    std::vector<double> A(n * n), b(n), x(n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) A[i + j * n] = value(i * n + j) + (i == j ? n : 0);
    for (int i = 0; i < n; ++i) b[i] = value(i + 3);
    cusolverDnHandle_t h;
    TRY(cusolverDnCreate(&h));
    DeviceBuffer<double> dA(n * n), db(n);
    DeviceBuffer<int> piv(n), info(1);
    TRY(cudaMemcpy(dA.ptr, A.data(), A.size() * 8, cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(db.ptr, b.data(), b.size() * 8, cudaMemcpyHostToDevice));
    int lwork = 0;
    TRY(cusolverDnDgetrf_bufferSize(h, n, n, dA.ptr, n, &lwork));
    DeviceBuffer<double> work(lwork > 0 ? lwork : 1);
    TRY(cusolverDnDgetrf(h, n, n, dA.ptr, n, work.ptr, piv.ptr, info.ptr));
    TRY(cusolverDnDgetrs(h, CUBLAS_OP_N, n, 1, dA.ptr, n, piv.ptr, db.ptr, n, info.ptr));
    int hinfo = 0;
    TRY(cudaMemcpy(&hinfo, info.ptr, sizeof(int), cudaMemcpyDeviceToHost));
    if (hinfo != 0) throw Failure{"getrf/getrs reported info " + std::to_string(hinfo)};
    TRY(cudaMemcpy(x.data(), db.ptr, n * 8, cudaMemcpyDeviceToHost));
    TRY(cusolverDnDestroy(h));
    double res = 0, scale = 0;
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int j = 0; j < n; ++j) s += A[i + j * n] * x[j];
      res = std::fmax(res, std::fabs(s - b[i]));
      scale = std::fmax(scale, std::fabs(b[i]));
    }
    return check_close(res / scale, 1e-10, "LU solve (Dgetrf + Dgetrs, 64x64): A x = b");
  });
#endif

#ifdef HAVE_CUDNN
  run("cudnn", reinterpret_cast<const void*>(&cudnnCreate), [&] {
    // A 3x3 cross-correlation with padding 1 over a 1x2x8x8 input into 3 output channels.
    const int N = 1, C = 2, H = 8, W = 8, K = 3, R = 3, S = 3;
    std::vector<float> in(N * C * H * W), filt(K * C * R * S), out(N * K * H * W);
    for (size_t i = 0; i < in.size(); ++i) in[i] = value(int(i));
    for (size_t i = 0; i < filt.size(); ++i) filt[i] = value(int(i) + 101);
    cudnnHandle_t h;
    TRY(cudnnCreate(&h));
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    TRY(cudnnCreateTensorDescriptor(&xd));
    TRY(cudnnCreateTensorDescriptor(&yd));
    TRY(cudnnCreateFilterDescriptor(&fd));
    TRY(cudnnCreateConvolutionDescriptor(&cd));
    TRY(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    TRY(cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
    TRY(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    int on, oc, oh, ow;
    TRY(cudnnGetConvolution2dForwardOutputDim(cd, xd, fd, &on, &oc, &oh, &ow));
    if (on != N || oc != K || oh != H || ow != W) throw Failure{"unexpected output shape"};
    TRY(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, H, W));
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int found = 0;
    TRY(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, fd, cd, yd, 8, &found, perf));
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    for (int i = 0; i < found; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS) {
        algo = perf[i].algo;
        break;
      }
    size_t bytes = 0;
    TRY(cudnnGetConvolutionForwardWorkspaceSize(h, xd, fd, cd, yd, algo, &bytes));
    DeviceBuffer<float> dx(in.size()), dw(filt.size()), dy(out.size());
    DeviceBuffer<char> work(bytes > 0 ? bytes : 1);
    TRY(cudaMemcpy(dx.ptr, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dw.ptr, filt.data(), filt.size() * 4, cudaMemcpyHostToDevice));
    const float one = 1.0f, zero = 0.0f;
    TRY(cudnnConvolutionForward(h, &one, xd, dx.ptr, fd, dw.ptr, cd, algo, work.ptr, bytes, &zero, yd, dy.ptr));
    TRY(cudaMemcpy(out.data(), dy.ptr, out.size() * 4, cudaMemcpyDeviceToHost));
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(fd);
    cudnnDestroyConvolutionDescriptor(cd);
    TRY(cudnnDestroy(h));
    double err = 0, scale = 0;
    for (int k = 0; k < K; ++k)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          double ref = 0;
          for (int c = 0; c < C; ++c)
            for (int r = 0; r < R; ++r)
              for (int s = 0; s < S; ++s) {
                int iy = y + r - 1, ix = x + s - 1;
                if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                  ref += double(in[(c * H + iy) * W + ix]) * filt[((k * C + c) * R + r) * S + s];
              }
          err = std::fmax(err, std::fabs(ref - out[(k * H + y) * W + x]));
          scale = std::fmax(scale, std::fabs(ref));
        }
    // cuDNN may pick a TF32 or Winograd algorithm: a looser bound than for SGEMM.
    return "cuDNN " + std::to_string(cudnnGetVersion()) + ", algorithm " + std::to_string(int(algo)) + ": " +
           check_close(err / scale, 5e-3, "3x3 convolution forward (1x2x8x8 -> 1x3x8x8)");
  });
#endif

#ifdef HAVE_NVRTC
  run("nvrtc", reinterpret_cast<const void*>(&nvrtcCompileProgram), [&] {
    int major_v = 0, minor_v = 0;
    TRY(nvrtcVersion(&major_v, &minor_v));
    TRY(cudaFree(nullptr));  // the runtime's primary context becomes current
    std::vector<char> cubin = nvrtc_compile(major, minor, false);
    return "NVRTC " + std::to_string(major_v) + "." + std::to_string(minor_v) + " compiled saxpy for sm_" +
           std::to_string(major) + std::to_string(minor) + "; " + launch_saxpy(cubin.data());
  });
#endif

#ifdef HAVE_NVJITLINK
#ifdef HAVE_NVRTC
  run("nvjitlink", reinterpret_cast<const void*>(&nvJitLinkCreate), [&] {
    TRY(cudaFree(nullptr));
    std::vector<char> ptx = nvrtc_compile(major, minor, true);
    std::string arch = "-arch=sm_" + std::to_string(major) + std::to_string(minor);
    const char* opts[] = {arch.c_str()};
    nvJitLinkHandle h;
    TRY(nvJitLinkCreate(&h, 1, opts));
    TRY(nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "saxpy.ptx"));
    nvJitLinkResult rc = nvJitLinkComplete(h);
    if (rc != NVJITLINK_SUCCESS) {
      size_t n = 0;
      nvJitLinkGetErrorLogSize(h, &n);
      std::string log(n, '\0');
      nvJitLinkGetErrorLog(h, &log[0]);
      throw Failure{"nvJitLinkComplete returned " + std::to_string(int(rc)) + ": " + log};
    }
    size_t n = 0;
    TRY(nvJitLinkGetLinkedCubinSize(h, &n));
    std::vector<char> cubin(n);
    TRY(nvJitLinkGetLinkedCubin(h, cubin.data()));
    TRY(nvJitLinkDestroy(&h));
    return "linked NVRTC's PTX into a cubin for sm_" + std::to_string(major) + std::to_string(minor) + "; " +
           launch_saxpy(cubin.data());
  });
#endif
#endif

#ifdef HAVE_NPP
  run("npp", reinterpret_cast<const void*>(&nppsAdd_32f_Ctx), [&] {
    const int n = 4096;
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; ++i) {
      a[i] = value(i);
      b[i] = value(i + 9);
    }
    NppStreamContext ctx;
    std::memset(&ctx, 0, sizeof ctx);
    ctx.hStream = 0;
    TRY(cudaGetDevice(&ctx.nCudaDeviceId));
    ctx.nMultiProcessorCount = prop.multiProcessorCount;
    ctx.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
    ctx.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
    ctx.nSharedMemPerBlock = prop.sharedMemPerBlock;
    ctx.nCudaDevAttrComputeCapabilityMajor = major;
    ctx.nCudaDevAttrComputeCapabilityMinor = minor;
    DeviceBuffer<float> da(n), db(n), dc(n);
    TRY(cudaMemcpy(da.ptr, a.data(), n * 4, cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(db.ptr, b.data(), n * 4, cudaMemcpyHostToDevice));
    TRY(nppsAdd_32f_Ctx(da.ptr, db.ptr, dc.ptr, n, ctx));
    TRY(cudaDeviceSynchronize());
    TRY(cudaMemcpy(c.data(), dc.ptr, n * 4, cudaMemcpyDeviceToHost));
    double err = 0;
    for (int i = 0; i < n; ++i) err = std::fmax(err, std::fabs(double(a[i]) + b[i] - c[i]));
    return check_close(err / 2.0, 1e-6, "nppsAdd_32f_Ctx (4096 floats)");
  });
#endif

#ifdef HAVE_NVJPEG
  run("nvjpeg", reinterpret_cast<const void*>(&nvjpegCreateSimple), [&] {
    // Encode a 64x64 RGB gradient, decode it again: JPEG is lossy, so a small mean error.
    const int W = 64, H = 64;
    std::vector<unsigned char> rgb(W * H * 3), back(W * H * 3);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        rgb[(y * W + x) * 3 + 0] = static_cast<unsigned char>(x * 4);
        rgb[(y * W + x) * 3 + 1] = static_cast<unsigned char>(y * 4);
        rgb[(y * W + x) * 3 + 2] = static_cast<unsigned char>(128);
      }
    nvjpegHandle_t h;
    TRY(nvjpegCreateSimple(&h));
    nvjpegEncoderState_t es;
    nvjpegEncoderParams_t ep;
    TRY(nvjpegEncoderStateCreate(h, &es, 0));
    TRY(nvjpegEncoderParamsCreate(h, &ep, 0));
    TRY(nvjpegEncoderParamsSetQuality(ep, 95, 0));
    TRY(nvjpegEncoderParamsSetSamplingFactors(ep, NVJPEG_CSS_444, 0));
    DeviceBuffer<unsigned char> din(rgb.size()), dout(back.size());
    TRY(cudaMemcpy(din.ptr, rgb.data(), rgb.size(), cudaMemcpyHostToDevice));
    nvjpegImage_t img;
    std::memset(&img, 0, sizeof img);
    img.channel[0] = din.ptr;
    img.pitch[0] = W * 3;
    TRY(nvjpegEncodeImage(h, es, ep, &img, NVJPEG_INPUT_RGBI, W, H, 0));
    size_t len = 0;
    TRY(nvjpegEncodeRetrieveBitstream(h, es, nullptr, &len, 0));
    std::vector<unsigned char> jpeg(len);
    TRY(nvjpegEncodeRetrieveBitstream(h, es, jpeg.data(), &len, 0));
    TRY(cudaStreamSynchronize(0));
    if (len < 4 || jpeg[0] != 0xFF || jpeg[1] != 0xD8) throw Failure{"the encoder's output is not a JPEG stream"};
    nvjpegJpegState_t js;
    TRY(nvjpegJpegStateCreate(h, &js));
    nvjpegImage_t out;
    std::memset(&out, 0, sizeof out);
    out.channel[0] = dout.ptr;
    out.pitch[0] = W * 3;
    TRY(nvjpegDecode(h, js, jpeg.data(), len, NVJPEG_OUTPUT_RGBI, &out, 0));
    TRY(cudaStreamSynchronize(0));
    TRY(cudaMemcpy(back.data(), dout.ptr, back.size(), cudaMemcpyDeviceToHost));
    nvjpegJpegStateDestroy(js);
    nvjpegEncoderParamsDestroy(ep);
    nvjpegEncoderStateDestroy(es);
    TRY(nvjpegDestroy(h));
    double sum = 0;
    for (size_t i = 0; i < rgb.size(); ++i) sum += std::abs(int(rgb[i]) - int(back[i]));
    double mean = sum / rgb.size();
    if (mean > 4.0) throw Failure{fmt("the decoded image differs from the encoded one by %.2f per channel on average", mean)};
    return fmt("encoded a 64x64 RGB image (%.0f bytes of JPEG) and decoded it back, mean error %.2f per channel", double(len), mean);
  });
#endif

#ifdef HAVE_CUPTI
  run("cupti", reinterpret_cast<const void*>(&cuptiGetVersion), [&] {
    uint32_t v = 0;
    uint64_t t0 = 0, t1 = 0;
    TRY(cuptiGetVersion(&v));
    TRY(cuptiGetTimestamp(&t0));
    TRY(cudaDeviceSynchronize());
    TRY(cuptiGetTimestamp(&t1));
    if (t1 < t0) throw Failure{"CUPTI's clock went backwards"};
    return "CUPTI API version " + std::to_string(v) + ", timestamps advance";
  });
#endif

#ifdef HAVE_NVTX
  run("nvtx", nullptr, [&] {
    int depth = nvtxRangePushA("cudaup verify");
    nvtxMarkA("cudaup");
    nvtxRangePop();
    return std::string("nvtxRangePushA / nvtxMarkA / nvtxRangePop (no tool attached: depth ") +
           std::to_string(depth) + ")";
  });
#endif

#ifdef HAVE_NVML
  run("nvml", reinterpret_cast<const void*>(&nvmlInit_v2), [&] {
    TRY(nvmlInit());
    unsigned int n = 0;
    TRY(nvmlDeviceGetCount(&n));
    char bus[64] = {0};
    TRY(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
    nvmlDevice_t dev;
    TRY(nvmlDeviceGetHandleByPciBusId(bus, &dev));
    char name[128] = {0};
    TRY(nvmlDeviceGetName(dev, name, sizeof name));
    TRY(nvmlShutdown());
    if (std::string(name) != prop.name)
      throw Failure{"NVML names the GPU at " + std::string(bus) + " " + name + ", CUDA " + prop.name};
    return "NVML sees " + std::to_string(n) + " GPU(s); the one at " + bus + " is " + name + ", as CUDA says";
  });
#endif

#ifdef HAVE_PROFILER
  run("profiler", reinterpret_cast<const void*>(&cudaProfilerStart), [&] {
    TRY(cudaProfilerStart());
    TRY(cudaProfilerStop());
    return std::string("cudaProfilerStart / cudaProfilerStop");
  });
#endif

  std::printf("DONE\n");
  return 0;
}
