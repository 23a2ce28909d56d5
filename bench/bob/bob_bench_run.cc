// Implementation of one bob measurement (bob_bench_run.h). The op runs through its
// launcher (kernels/cuda/cuda_ops.h) on our own stream, so cudaEvents, the L2 flush and
// the op share one stream; the scratch allocator hook counts the op's extra memory.
#include "bench/bob/bob_bench_run.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bob/bob_inputs.h"
#include "common/status_macros.h"
#include "kernels/common/half.h"
#include "kernels/cpu/attention_bwd_bwd_naive.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::bench {
namespace {

constexpr size_t kL2FlushBytes = size_t{256} << 20;  // > 4× the H200's 60 MB L2
constexpr double kTargetSeconds = 2.0;               // time budget per N for the reps
constexpr int kMinReps = 3, kMaxReps = 20;

using DevPtr = std::shared_ptr<void>;

absl::StatusOr<DevPtr> DevAlloc(size_t bytes) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return absl::ResourceExhaustedError(
        absl::StrCat("cudaMalloc of ", bytes, " bytes: ", cudaGetErrorString(err)));
  }
  return DevPtr(p, [](void* q) { cudaFree(q); });
}

// All device state of one shape: the op's 10 inputs and 4 outputs, contiguous.
struct Problem {
  BenchShape s;
  DevPtr q, k, v, o, dout, gq, gk, gv, lse, dvec, ddq, ddk, ddv, dddo;
  int64_t nq() const { return s.B * s.T * s.H * s.D; }
  int64_t nk() const { return s.B * s.T * s.Hkv * s.D; }
  int64_t ns() const { return s.B * s.H * s.T; }
  TensorView Q(const DevPtr& p) const {
    return MakeView(p.get(), DType::kBF16, DeviceKind::kCuda, {s.B, s.T, s.H, s.D});
  }
  TensorView KV(const DevPtr& p) const {
    return MakeView(p.get(), DType::kBF16, DeviceKind::kCuda, {s.B, s.T, s.Hkv, s.D});
  }
  TensorView Stat(const DevPtr& p) const {
    return MakeView(p.get(), DType::kF32, DeviceKind::kCuda, {s.B, s.H, s.T});
  }
};

absl::StatusOr<Problem> MakeProblem(const BenchShape& s, cudaStream_t stream) {
  Problem p;
  p.s = s;
  for (DevPtr* x : {&p.q, &p.o, &p.dout, &p.gq, &p.ddq, &p.dddo}) {
    ASSIGN_OR_RETURN(*x, DevAlloc(p.nq() * 2));
  }
  for (DevPtr* x : {&p.k, &p.v, &p.gk, &p.gv, &p.ddk, &p.ddv}) {
    ASSIGN_OR_RETURN(*x, DevAlloc(p.nk() * 2));
  }
  for (DevPtr* x : {&p.lse, &p.dvec}) {
    ASSIGN_OR_RETURN(*x, DevAlloc(p.ns() * 4));
  }
  uint64_t seed = 1;
  for (auto [x, n] : {std::pair{&p.q, p.nq()}, std::pair{&p.k, p.nk()}, std::pair{&p.v, p.nk()},
                      std::pair{&p.dout, p.nq()}, std::pair{&p.gq, p.nq()},
                      std::pair{&p.gk, p.nk()}, std::pair{&p.gv, p.nk()}})
    RETURN_IF_CUDA_ERROR(FillNormalBf16(x->get(), n, seed++, stream));
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.D));
  RETURN_IF_CUDA_ERROR(ForwardStatsBf16(
      p.q.get(), p.k.get(), p.v.get(), p.dout.get(), p.o.get(), static_cast<float*>(p.lse.get()),
      static_cast<float*>(p.dvec.get()), s.B, s.T, s.H, s.Hkv, s.D, s.causal, scale, stream));
  RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream));
  return p;
}

// A CUDA context on `stream` whose scratch allocator records its peak.
struct CountingContext {
  cuda::CudaContext ctx;
  std::shared_ptr<int64_t> live = std::make_shared<int64_t>(0), peak = std::make_shared<int64_t>(0);
  explicit CountingContext(cudaStream_t stream) {
    ctx.stream = stream;
    // The compute capability picks the variant (sm_90a kernels run only on 9.0).
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess)
      ctx.sm = major * 10 + minor;
    auto live_c = live, peak_c = peak;
    ctx.scratch = [stream, live_c, peak_c](size_t bytes) -> absl::StatusOr<std::shared_ptr<void>> {
      void* p = nullptr;
      RETURN_IF_CUDA_ERROR(cudaMallocAsync(&p, bytes, stream));
      *live_c += static_cast<int64_t>(bytes);
      *peak_c = std::max(*peak_c, *live_c);
      return std::shared_ptr<void>(p, [stream, live_c, bytes](void* q) {
        cudaFreeAsync(q, stream);
        *live_c -= static_cast<int64_t>(bytes);
      });
    };
  }
};

absl::Status RunBob(const Problem& p, cuda::CudaContext& ctx) {
  OpDesc desc;
  desc.op = Op::kAttentionBwdBwd;
  desc.dtype = DType::kBF16;
  desc.attention.causal = p.s.causal;
  std::vector<TensorView> in = {p.Q(p.q),      p.KV(p.k),      p.KV(p.v), p.Q(p.o),   p.Q(p.dout),
                                p.Stat(p.lse), p.Stat(p.dvec), p.Q(p.gq), p.KV(p.gk), p.KV(p.gv)};
  std::vector<TensorView> out = {p.Q(p.ddq), p.KV(p.ddk), p.KV(p.ddv), p.Q(p.dddo)};
  return cuda::AttentionBwdBwd(desc, in, out, ctx);
}

// Our Flash forward then backward, reusing the buffers.
absl::Status RunFwdBwd(const Problem& p, cuda::CudaContext& ctx) {
  OpDesc desc;
  desc.dtype = DType::kBF16;
  desc.attention.causal = p.s.causal;
  desc.op = Op::kAttentionFwd;
  std::vector<TensorView> fin = {p.Q(p.q), p.KV(p.k), p.KV(p.v)};
  std::vector<TensorView> fout = {p.Q(p.o), p.Stat(p.lse)};
  RETURN_IF_ERROR(cuda::FlashAttentionFwd(desc, fin, fout, ctx));
  desc.op = Op::kAttentionBwd;
  std::vector<TensorView> bin = {p.Q(p.q), p.KV(p.k),   p.KV(p.v),
                                 p.Q(p.o), p.Q(p.dout), p.Stat(p.lse)};
  std::vector<TensorView> bout = {p.Q(p.ddq), p.KV(p.ddk), p.KV(p.ddv), p.Stat(p.dvec)};
  return cuda::FlashAttentionBwd(desc, bin, bout, ctx);
}

// Median ms of `fn` over adaptive reps, L2 flushed before each, after one warm-up.
absl::StatusOr<std::pair<double, int>> TimeMs(const std::function<absl::Status()>& fn,
                                              cudaStream_t stream, void* flush) {
  cudaEvent_t start, stop;
  RETURN_IF_CUDA_ERROR(cudaEventCreate(&start));
  RETURN_IF_CUDA_ERROR(cudaEventCreate(&stop));
  std::vector<float> times;
  int reps = 1;
  for (int r = -1; r < reps; ++r) {
    RETURN_IF_CUDA_ERROR(cudaMemsetAsync(flush, r & 0xff, kL2FlushBytes, stream));
    RETURN_IF_CUDA_ERROR(cudaEventRecord(start, stream));
    RETURN_IF_ERROR(fn());
    RETURN_IF_CUDA_ERROR(cudaEventRecord(stop, stream));
    RETURN_IF_CUDA_ERROR(cudaEventSynchronize(stop));
    float ms = 0.0f;
    RETURN_IF_CUDA_ERROR(cudaEventElapsedTime(&ms, start, stop));
    if (r == -1) {  // warm-up: sets the rep count for about kTargetSeconds
      reps = std::clamp(static_cast<int>(kTargetSeconds * 1e3 / std::max(ms, 1e-3f)), kMinReps,
                        kMaxReps);
      continue;
    }
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return std::pair<double, int>{times[times.size() / 2], reps};
}

absl::StatusOr<std::vector<double>> Download(const DevPtr& p, int64_t n) {
  std::vector<uint16_t> bits(n);
  RETURN_IF_CUDA_ERROR(cudaMemcpy(bits.data(), p.get(), n * 2, cudaMemcpyDeviceToHost));
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = Bf16BitsToFloat(bits[i]);
  return out;
}

absl::Status DumpProblem(const Problem& p, const std::string& dir) {
  const std::string stem = absl::StrCat(dir, "/bob_N", p.s.T);
  std::vector<std::pair<const char*, std::pair<const DevPtr*, int64_t>>> tensors = {
      {"q", {&p.q, p.nq()}},       {"k", {&p.k, p.nk()}},      {"v", {&p.v, p.nk()}},
      {"dout", {&p.dout, p.nq()}}, {"gq", {&p.gq, p.nq()}},    {"gk", {&p.gk, p.nk()}},
      {"gv", {&p.gv, p.nk()}},     {"ddq", {&p.ddq, p.nq()}},  {"ddk", {&p.ddk, p.nk()}},
      {"ddv", {&p.ddv, p.nk()}},   {"dddo", {&p.dddo, p.nq()}}};
  for (const auto& [name, t] : tensors) {
    std::vector<uint16_t> bits(t.second);
    RETURN_IF_CUDA_ERROR(
        cudaMemcpy(bits.data(), t.first->get(), t.second * 2, cudaMemcpyDeviceToHost));
    const std::string path = absl::StrCat(stem, "_", name, ".bf16");
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return absl::InternalError(absl::StrCat("cannot write ", path));
    const bool ok = std::fwrite(bits.data(), 2, bits.size(), f) == bits.size();
    if (std::fclose(f) != 0 || !ok) return absl::InternalError(absl::StrCat("short write ", path));
  }
  FILE* meta = std::fopen((stem + ".json").c_str(), "w");
  if (meta == nullptr) return absl::InternalError(absl::StrCat("cannot write ", stem, ".json"));
  std::fprintf(meta, "{\"B\":%lld,\"T\":%lld,\"H\":%lld,\"Hkv\":%lld,\"D\":%lld,\"causal\":%s}\n",
               static_cast<long long>(p.s.B), static_cast<long long>(p.s.T),
               static_cast<long long>(p.s.H), static_cast<long long>(p.s.Hkv),
               static_cast<long long>(p.s.D), p.s.causal ? "true" : "false");
  std::fclose(meta);
  return absl::OkStatus();
}

}  // namespace

double BobFlops(const BenchShape& s, int units) {
  const double unit = 2.0 * s.B * s.H * static_cast<double>(s.T) * s.T * s.D;
  return units * (s.causal ? unit / 2 : unit);
}

absl::StatusOr<double> CheckAgainstCpu() {
  const BenchShape s{1, 300, 4, 2, 64, true};
  cudaStream_t stream;
  RETURN_IF_CUDA_ERROR(cudaStreamCreate(&stream));
  ASSIGN_OR_RETURN(Problem p, MakeProblem(s, stream));
  CountingContext cc(stream);
  RETURN_IF_ERROR(RunBob(p, cc.ctx));
  RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream));
  std::vector<std::vector<double>> host;
  for (auto [x, n] :
       {std::pair{&p.q, p.nq()}, std::pair{&p.k, p.nk()}, std::pair{&p.v, p.nk()},
        std::pair{&p.dout, p.nq()}, std::pair{&p.gq, p.nq()}, std::pair{&p.gk, p.nk()},
        std::pair{&p.gv, p.nk()}, std::pair{&p.ddq, p.nq()}, std::pair{&p.ddk, p.nk()},
        std::pair{&p.ddv, p.nk()}, std::pair{&p.dddo, p.nq()}}) {
    ASSIGN_OR_RETURN(std::vector<double> h, Download(*x, n));
    host.push_back(std::move(h));
  }
  cudaStreamDestroy(stream);
  std::vector<double> ref[4] = {std::vector<double>(p.nq()), std::vector<double>(p.nk()),
                                std::vector<double>(p.nk()), std::vector<double>(p.nq())};
  cpu::BobNaiveBwdBwd({AttentionShape{s.B, s.T, s.H, s.Hkv, s.D}, s.causal, 0.0}, host[0].data(),
                      host[1].data(), host[2].data(), host[3].data(), host[4].data(),
                      host[5].data(), host[6].data(), ref[0].data(), ref[1].data(), ref[2].data(),
                      ref[3].data());
  double worst = 0.0;
  for (int i = 0; i < 4; ++i) {
    double num = 0.0, den = 0.0;
    for (size_t x = 0; x < ref[i].size(); ++x) {
      const double d = host[7 + i][x] - ref[i][x];
      num += d * d;
      den += ref[i][x] * ref[i][x];
    }
    const double e = std::sqrt(num / std::max(den, 1e-300));
    worst = std::isnan(e) ? e : std::max(worst, e);
  }
  return worst;
}

absl::StatusOr<BenchResult> RunOne(const BenchShape& s, const std::string& dump_dir) {
  cudaStream_t stream;
  RETURN_IF_CUDA_ERROR(cudaStreamCreate(&stream));
  std::unique_ptr<CUstream_st, void (*)(cudaStream_t)> owner(
      stream, [](cudaStream_t x) { cudaStreamDestroy(x); });
  ASSIGN_OR_RETURN(DevPtr flush, DevAlloc(kL2FlushBytes));
  ASSIGN_OR_RETURN(Problem p, MakeProblem(s, stream));
  CountingContext cc(stream);
  BenchResult r;
  ASSIGN_OR_RETURN(auto timed, TimeMs([&] { return RunBob(p, cc.ctx); }, stream, flush.get()));
  r.ms = timed.first;
  r.reps = timed.second;
  r.peak_extra_bytes = *cc.peak;
  RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream));
  for (const DevPtr* x : {&p.ddq, &p.dddo, &p.ddk, &p.ddv}) {
    ASSIGN_OR_RETURN(std::vector<double> h,
                     Download(*x, x == &p.ddq || x == &p.dddo ? p.nq() : p.nk()));
    for (double v : h) r.finite = r.finite && std::isfinite(v);
  }
  if (!dump_dir.empty()) RETURN_IF_ERROR(DumpProblem(p, dump_dir));
  // Our forward + backward at the same shape, when those kernels exist.
  auto fwd_bwd = TimeMs([&] { return RunFwdBwd(p, cc.ctx); }, stream, flush.get());
  if (fwd_bwd.ok()) {
    r.fwd_bwd_ms = fwd_bwd->first;
  } else if (!absl::IsUnimplemented(fwd_bwd.status())) {
    return fwd_bwd.status();
  }
  return r;
}

}  // namespace flashtick::bench
