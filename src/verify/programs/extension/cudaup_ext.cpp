// cudaup verify: a torch.utils.cpp_extension CUDA extension, built against the installed toolkit.
#include <torch/extension.h>

torch::Tensor axpb_cuda(torch::Tensor x, double a, double b);

torch::Tensor axpb(torch::Tensor x, double a, double b) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
  return axpb_cuda(x.contiguous(), a, b);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("axpb", &axpb, "a * x + b, on the GPU"); }
