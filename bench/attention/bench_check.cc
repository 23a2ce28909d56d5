// CheckAttentionParity (bench_check.h): inputs exact in bf16 and fp16 (so both sides
// read the same values), CPU fp64 forward and backward through the CPU backend, the
// same on the GPU through the launchers, nmse per output.
#include "bench/attention/bench_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/attention_dispatch.h"
#include "kernels/common/element_value.h"
#include "kernels/cpu/attention_naive.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::bench {
namespace {

struct CheckShape {
  int64_t B, T, H, Hkv, D;
  bool causal;
};

double Nmse(const std::vector<double>& x, const std::vector<double>& ref) {
  double e = 0, r = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(x[i])) return INFINITY;
    e += (x[i] - ref[i]) * (x[i] - ref[i]), r += ref[i] * ref[i];
  }
  return r > 0 ? e / r : e;
}

// A device tensor built from fp64 values in `dt` (16-bit or fp32), read back as fp64.
struct DevTensor {
  std::shared_ptr<void> mem;
  TensorView view;
};

absl::StatusOr<DevTensor> Upload(const std::shared_ptr<cuda::CudaDevice>& dev,
                                 const std::vector<double>& x, DType dt,
                                 std::initializer_list<int64_t> shape) {
  std::vector<uint8_t> host(x.size() * DTypeSize(dt));
  for (size_t i = 0; i < x.size(); ++i) {
    if (dt == DType::kF32) {
      const float f = static_cast<float>(x[i]);
      std::memcpy(&host[4 * i], &f, 4);
    } else {
      const uint16_t h = dt == DType::kBF16 ? DoubleToBf16Bits(x[i]) : DoubleToHalfBits(x[i]);
      std::memcpy(&host[2 * i], &h, 2);
    }
  }
  ASSIGN_OR_RETURN(auto mem, cuda::CudaDevice::Allocate(dev, std::max<size_t>(host.size(), 16)));
  // On the device's (non-blocking) stream: the pool allocation is ordered there.
  cudaStream_t stream = dev->context().stream;
  RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(mem.get(), host.data(), host.size(), cudaMemcpyHostToDevice, stream));
  RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream));
  return DevTensor{mem, MakeView(mem.get(), dt, DeviceKind::kCuda, shape)};
}

absl::StatusOr<std::vector<double>> Download(const DevTensor& t, cudaStream_t stream) {
  const DType dt = t.view.dtype;
  std::vector<uint8_t> host(t.view.bytes());
  RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(host.data(), t.view.data, host.size(), cudaMemcpyDeviceToHost, stream));
  RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream));
  std::vector<double> x(t.view.numel());
  for (size_t i = 0; i < x.size(); ++i) x[i] = ElementValue(dt, host.data(), i);
  return x;
}

absl::Status CheckOne(const std::shared_ptr<cuda::CudaDevice>& dev, DType dt, const CheckShape& c,
                      const std::string& impl) {
  const AttentionShape s{c.B, c.T, c.H, c.Hkv, c.D};
  const size_t nq = c.B * c.T * c.H * c.D, nk = c.B * c.T * c.Hkv * c.D, ns = c.B * c.H * c.T;
  std::mt19937 rng(static_cast<uint32_t>(c.T * 131 + c.D));
  std::normal_distribution<double> normal(0.0, 1.0);
  auto gen = [&](size_t n) {
    std::vector<double> v(n);
    for (auto& x : v) x = cpu::RoundTo(DType::kF16, cpu::RoundTo(DType::kBF16, normal(rng)));
    return v;
  };
  const auto q = gen(nq), k = gen(nk), v = gen(nk), dout = gen(nq);
  cpu::NaiveAttentionOptions opt;
  opt.causal = c.causal;
  std::vector<double> o(nq), l(ns), dq(nq), dk(nk), dv(nk), dvec(ns);
  cpu::NaiveAttentionFwd(s, opt, q.data(), k.data(), v.data(), o.data(), l.data());
  cpu::NaiveAttentionBwd(s, opt, q.data(), k.data(), v.data(), o.data(), dout.data(), dq.data(),
                         dk.data(), dv.data(), dvec.data());

  OpDesc desc;
  desc.dtype = dt;
  desc.attention.causal = c.causal;
  desc.attention.head_dim = static_cast<int>(c.D);
  auto& ctx = dev->context();
  ASSIGN_OR_RETURN(auto gq, Upload(dev, q, dt, {c.B, c.T, c.H, c.D}));
  ASSIGN_OR_RETURN(auto gk, Upload(dev, k, dt, {c.B, c.T, c.Hkv, c.D}));
  ASSIGN_OR_RETURN(auto gv, Upload(dev, v, dt, {c.B, c.T, c.Hkv, c.D}));
  ASSIGN_OR_RETURN(auto gdo, Upload(dev, dout, dt, {c.B, c.T, c.H, c.D}));
  ASSIGN_OR_RETURN(auto go, Upload(dev, std::vector<double>(nq), dt, {c.B, c.T, c.H, c.D}));
  ASSIGN_OR_RETURN(auto gl, Upload(dev, std::vector<double>(ns), DType::kF32, {c.B, c.H, c.T}));
  ASSIGN_OR_RETURN(auto gdq, Upload(dev, std::vector<double>(nq), dt, {c.B, c.T, c.H, c.D}));
  ASSIGN_OR_RETURN(auto gdk, Upload(dev, std::vector<double>(nk), dt, {c.B, c.T, c.Hkv, c.D}));
  ASSIGN_OR_RETURN(auto gdv, Upload(dev, std::vector<double>(nk), dt, {c.B, c.T, c.Hkv, c.D}));
  ASSIGN_OR_RETURN(auto gdvec, Upload(dev, std::vector<double>(ns), DType::kF32, {c.B, c.H, c.T}));
  desc.op = Op::kAttentionFwd;
  const TensorView fin[] = {gq.view, gk.view, gv.view};
  const TensorView fout[] = {go.view, gl.view};
  const bool cudnn = impl == "cudnn";
  // flash_sm90a: our launchers with the mode set, so the forward takes the wgmma kernel
  // where it runs (kernels/cuda/attention/sm90/); restored to flash afterwards.
  SetAttentionImplOverride(impl == "flash_sm90a" ? AttentionImpl::kFlashSm90a : AttentionImpl::kFlash);
  RETURN_IF_ERROR((cudnn ? cuda::CudnnAttentionFwd : cuda::FlashAttentionFwd)(desc, cuda::In(fin), cuda::Out(fout), ctx));
  desc.op = Op::kAttentionBwd;
  const TensorView bin[] = {gq.view, gk.view, gv.view, go.view, gdo.view, gl.view};
  const TensorView bout[] = {gdq.view, gdk.view, gdv.view, gdvec.view};
  RETURN_IF_ERROR((cudnn ? cuda::CudnnAttentionBwd : cuda::FlashAttentionBwd)(desc, cuda::In(bin), cuda::Out(bout), ctx));
  RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(ctx.stream));
  SetAttentionImplOverride(AttentionImpl::kFlash);

  const double tol = dt == DType::kBF16 ? 1e-4 : 1e-5;
  const std::pair<const char*, std::pair<const DevTensor*, const std::vector<double>*>> outs[] = {
      {"O", {&go, &o}}, {"L", {&gl, &l}}, {"dQ", {&gdq, &dq}}, {"dK", {&gdk, &dk}}, {"dV", {&gdv, &dv}},
      {"Dvec", {&gdvec, &dvec}}};
  std::string line = absl::StrCat("check ", impl, " B=", c.B, " T=", c.T, " H=", c.H, " Hkv=", c.Hkv, " D=", c.D,
                                  " causal=", c.causal, " ", DTypeName(dt), ":");
  absl::Status status;
  for (const auto& [name, pair] : outs) {
    ASSIGN_OR_RETURN(auto got, Download(*pair.first, ctx.stream));
    const double e = Nmse(got, *pair.second);
    absl::StrAppend(&line, " ", name, "=", e);
    if (!(e <= tol) && status.ok())
      status = absl::InternalError(absl::StrCat(line, " -- ", name, " nmse above ", tol,
                                                "; run parity_gpu for the per-case report"));
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  return status;
}

}  // namespace

absl::Status CheckAttentionParity(const std::shared_ptr<cuda::CudaDevice>& dev, DType dtype,
                                  const std::vector<std::string>& impls) {
  const CheckShape shapes[] = {{1, 1000, 2, 2, 64, true}, {1, 777, 4, 2, 128, true}, {2, 300, 2, 1, 64, false}};
  // auto runs one of the two per shape: check both.
  std::vector<std::string> check;
  for (const std::string& i : impls) {
    for (const char* one : {"flash", "cudnn", "flash_sm90a"})
      if ((i == one || i == "auto") && std::find(check.begin(), check.end(), one) == check.end())
        check.push_back(one);
  }
  for (const std::string& impl : check) {
    if (impl == "cudnn" && !cuda::CudnnAttentionBuilt()) {
      std::fprintf(stderr, "check cudnn: SKIP (this build has no cuDNN backend)\n");
      continue;
    }
    for (const auto& c : shapes) RETURN_IF_ERROR(CheckOne(dev, dtype, c, impl));
  }
  return absl::OkStatus();
}

}  // namespace flashtick::bench
