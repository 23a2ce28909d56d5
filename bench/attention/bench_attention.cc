// bench_attention: our CUDA Flash attention forward and forward+backward per sequence
// length N and head dim, one JSON line per measurement in the schema of docs/benchmarks.md:
//   {"bench":"attention","op":"fwd"|"fwd+bwd","impl":"flashtick_flash_cuda"|"flashtick_cudnn"|
//    "flashtick_auto","kernel":...,
//    "B","H","N","d","causal","dtype","ms","tflops","peak_extra_bytes","oom","gpu","commit"}
// ms is the median of cudaEvent-timed reps with L2 flushed (a memset over 2× the L2)
// before each; TFLOP/s by the FlashAttention convention (kernels/ops/attention.h:
// forward 4·B·H·N²·D, halved when causal; backward 2.5× forward). peak_extra_bytes is
// the device pool's high-water mark above the inputs (Q, K, V, dO): outputs, L, Dvec
// and the backward's fp32 dQ accumulator. --check (default) first runs the parity
// check of bench_check.h and exits 1 if it fails.
// --impl picks what runs, one row each per shape in the same process: flash (ours,
// default), cudnn (cuDNN's SDPA through kernels/cuda/attention/cudnn_sdpa.cc), auto
// (the measuring dispatcher, kernels/attention_dispatch.h; its one-time measurement
// falls in the warm-up, and "kernel" names the winner) and flash_sm90a (ours on the
// Hopper wgmma kernels where they run: forward D = 64 or 128, backward D = 64).
// --rounds R measures every shape R times, the implementations' order rotated each round
// ("round" in each row), so a slow spell of the GPU's clock lands on one round of one
// implementation rather than on all of its reps; merge_cudnn.py takes each
// implementation's median over the rounds. Two runs of the same cuDNN kernel differed by
// 9% in one median of 10 back-to-back reps on the H200 (docs/kernels/cudnn.md).
// --fwd-splits K fixes the forward's number of key splits (1: never split; default 0:
// the launcher's choice, FlashFwdNumSplits), for the A/B of split-KV against the unsplit
// kernel (bench/scripts/gpu_splitkv.sh); it applies to the parity check too.
// Usage: bench_attention [--n 2048,...] [--d 64,128] [--batch 1] [--heads 12]
//        [--dtype bf16|fp16] [--noncausal] [--no-check] [--commit SHA] [--max-reps 10]
//        [--impl flash,cudnn,auto,flash_sm90a] [--rounds 1] [--fwd-splits 0]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/attention/bench_check.h"
#include "bench/attention/bench_init.h"
#include "common/status_macros.h"
#include "kernels/attention_dispatch.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/ops/attention.h"

namespace flashtick::bench {
namespace {

struct Options {
  std::vector<int64_t> ns = {2048, 4096, 8192, 16384, 23400, 32768, 65536, 131072, 262144};
  std::vector<int64_t> ds = {64, 128};
  int64_t batch = 1, heads = 12;
  DType dtype = DType::kBF16;
  bool causal = true, check = true;
  std::string commit = "unknown";
  std::vector<std::string> impls = {"flash"};
  int max_reps = 10;
  int rounds = 1;
  int fwd_splits = 0;  // CudaContext::fwd_splits
  double budget_ms = 3000;  // per measurement, after warm-up: fewer reps at large N
};

std::vector<int64_t> ParseList(const std::string& s) {
  std::vector<int64_t> v;
  for (absl::string_view part : absl::StrSplit(s, ',')) {
    int64_t x;
    if (absl::SimpleAtoi(part, &x)) v.push_back(x);
  }
  return v;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--n") o->ns = ParseList(next());
    else if (a == "--d") o->ds = ParseList(next());
    else if (a == "--batch") o->batch = std::atoll(next().c_str());
    else if (a == "--heads") o->heads = std::atoll(next().c_str());
    else if (a == "--dtype") o->dtype = next() == "fp16" ? DType::kF16 : DType::kBF16;
    else if (a == "--noncausal") o->causal = false;
    else if (a == "--no-check") o->check = false;
    else if (a == "--check") o->check = true;
    else if (a == "--commit") o->commit = next();
    else if (a == "--max-reps") o->max_reps = std::max(1, std::atoi(next().c_str()));
    else if (a == "--rounds") o->rounds = std::max(1, std::atoi(next().c_str()));
    else if (a == "--fwd-splits") o->fwd_splits = std::max(0, std::atoi(next().c_str()));
    else if (a == "--impl") {
      o->impls.clear();
      for (absl::string_view part : absl::StrSplit(next(), ',')) {
        if (!ParseAttentionImpl(std::string(part)).ok()) {
          std::fprintf(stderr, "bench_attention: --impl takes flash, cudnn, auto, flash_sm90a\n");
          return false;
        }
        o->impls.emplace_back(part);
      }
    }
    else {
      std::fprintf(stderr, "bench_attention: unknown flag %s (see the header of bench_attention.cc)\n", a.c_str());
      return false;
    }
  }
  return true;
}

class Bench {
 public:
  Bench(std::shared_ptr<cuda::CudaDevice> dev, const Options& o) : dev_(std::move(dev)), o_(o) {}

  absl::Status Init() {
    int l2 = 0;
    RETURN_IF_CUDA_ERROR(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev_->device_index()));
    flush_bytes_ = 2 * static_cast<size_t>(std::max(l2, 1 << 20));
    ASSIGN_OR_RETURN(flush_, cuda::CudaDevice::Allocate(dev_, flush_bytes_));
    RETURN_IF_CUDA_ERROR(cudaEventCreate(&start_));
    RETURN_IF_CUDA_ERROR(cudaEventCreate(&stop_));
    return absl::OkStatus();
  }

  absl::Status Run(int64_t N, int64_t D);
  void set_impl(const std::string& impl) { impl_ = impl; }
  void set_round(int round) { round_ = round; }

 private:
  // Median ms of fn over adaptive reps (3 .. max_reps within the budget), L2 flushed first.
  absl::StatusOr<double> Time(const std::function<absl::Status()>& fn) {
    cudaStream_t s = dev_->context().stream;
    RETURN_IF_ERROR(fn());  // warm-up (also the first launch's attribute setup)
    RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(s));
    std::vector<float> times;
    for (int rep = 0; rep < o_.max_reps; ++rep) {
      RETURN_IF_CUDA_ERROR(cudaMemsetAsync(flush_.get(), rep & 0xff, flush_bytes_, s));
      RETURN_IF_CUDA_ERROR(cudaEventRecord(start_, s));
      RETURN_IF_ERROR(fn());
      RETURN_IF_CUDA_ERROR(cudaEventRecord(stop_, s));
      RETURN_IF_CUDA_ERROR(cudaEventSynchronize(stop_));
      float ms = 0;
      RETURN_IF_CUDA_ERROR(cudaEventElapsedTime(&ms, start_, stop_));
      times.push_back(ms);
      if (rep + 1 >= 3 && ms * (rep + 1) > o_.budget_ms) break;  // enough at large N
    }
    std::sort(times.begin(), times.end());
    return static_cast<double>(times[times.size() / 2]);
  }

  absl::StatusOr<std::shared_ptr<void>> Alloc(int64_t elems, DType dt) {
    return cuda::CudaDevice::Allocate(dev_, static_cast<size_t>(elems) * DTypeSize(dt));
  }

  void Emit(const char* op, const std::string& kernel, int64_t N, int64_t D, double ms, double flops,
            int64_t peak_extra, bool oom) {
    const std::string impl = impl_ == "cudnn"         ? "flashtick_cudnn"
                             : impl_ == "auto"        ? "flashtick_auto"
                             : impl_ == "flash_sm90a" ? "flashtick_flash_sm90a"
                                                      : "flashtick_flash_cuda";
    std::string line = absl::StrFormat(
        R"({"bench":"attention","op":"%s","impl":"%s","kernel":"%s","B":%d,"H":%d,)"
        R"("N":%d,"d":%d,"causal":%s,"dtype":"%s",)",
        op, impl, kernel, o_.batch, o_.heads, N, D, o_.causal ? "true" : "false", DTypeName(o_.dtype));
    if (oom)
      line += R"("ms":null,"tflops":null,"peak_extra_bytes":null,"oom":true,)";
    else
      line += absl::StrFormat(R"("ms":%.4f,"tflops":%.2f,"peak_extra_bytes":%d,"oom":false,)", ms,
                              flops / (ms * 1e-3) / 1e12, peak_extra);
    line += absl::StrFormat(R"("round":%d,"gpu":"%s","commit":"%s"})", round_, dev_->device_name(),
                            o_.commit);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  std::shared_ptr<cuda::CudaDevice> dev_;
  Options o_;
  std::string impl_ = "flash";  // the implementation Run measures (--impl)
  int round_ = 0;               // --rounds: which round this measurement belongs to
  std::shared_ptr<void> flush_;
  size_t flush_bytes_ = 0;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

absl::Status Bench::Run(int64_t N, int64_t D) {
  const int64_t B = o_.batch, H = o_.heads;
  const AttentionShape s{B, N, H, H, D};
  const DType dt = o_.dtype;
  OpDesc desc;
  desc.dtype = dt;
  desc.attention.causal = o_.causal;
  desc.attention.head_dim = static_cast<int>(D);
  auto& ctx = dev_->context();
  // The launchers of the implementation measured; auto goes through the dispatcher.
  using OpFn = absl::Status (*)(const OpDesc&, cuda::In, cuda::Out, cuda::CudaContext&);
  OpFn fwd_fn = &cuda::FlashAttentionFwd, bwd_fn = &cuda::FlashAttentionBwd;
  auto path_fn = &cuda::AttentionKernelPath;
  // Ours runs the wgmma forward only in the flash_sm90a mode (kernel path "…_sm90a").
  SetAttentionImplOverride(impl_ == "flash_sm90a" ? AttentionImpl::kFlashSm90a : AttentionImpl::kFlash);
  if (impl_ == "cudnn") {
    fwd_fn = &cuda::CudnnAttentionFwd, bwd_fn = &cuda::CudnnAttentionBwd;
    path_fn = &cuda::CudnnAttentionKernelPath;
  } else if (impl_ == "auto") {
    SetAttentionImplOverride(AttentionImpl::kAuto);
    fwd_fn = &cuda::AttentionFwd, bwd_fn = &cuda::AttentionBwd;
    path_fn = &cuda::DispatchedAttentionKernelPath;  // the winner, once a call has decided
  }
  auto kernel_of = [&](Op op) {
    OpDesc d = desc;
    d.op = op;
    return path_fn(d, static_cast<int>(D), ctx);
  };
  std::string fwd_kernel = kernel_of(Op::kAttentionFwd);
  std::string bwd_kernel = kernel_of(Op::kAttentionBwd);
  const double fwd_flops = AttentionFwdFlops(s, o_.causal);
  const double bwd_flops = AttentionBwdFlops(s, o_.causal);
  auto oom_both = [&] {
    Emit("fwd", fwd_kernel, N, D, 0, 0, 0, true);
    Emit("fwd+bwd", fwd_kernel + "+" + bwd_kernel, N, D, 0, 0, 0, true);
    return absl::OkStatus();
  };

  const int64_t n_act = B * N * H * D, n_stat = B * H * N;
  std::shared_ptr<void> q, k, v, dout;
  for (auto* t : {&q, &k, &v, &dout}) {
    auto m = Alloc(n_act, dt);
    if (absl::IsResourceExhausted(m.status())) return oom_both();
    RETURN_IF_ERROR(m.status());
    *t = *m;
  }
  uint64_t seed = static_cast<uint64_t>(N * 1000 + D);
  for (auto* t : {&q, &k, &v, &dout})
    RETURN_IF_CUDA_ERROR(FillNormal16(t->get(), n_act, dt == DType::kBF16, seed++, ctx.stream));
  RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(ctx.stream));
  const int64_t base = dev_->Memory().used_bytes;
  dev_->ResetPeak();

  const TensorView vq = MakeView(q.get(), dt, DeviceKind::kCuda, {B, N, H, D});
  const TensorView vk = MakeView(k.get(), dt, DeviceKind::kCuda, {B, N, H, D});
  const TensorView vv = MakeView(v.get(), dt, DeviceKind::kCuda, {B, N, H, D});
  const TensorView vdo = MakeView(dout.get(), dt, DeviceKind::kCuda, {B, N, H, D});
  std::shared_ptr<void> o, l, dq, dk, dv, dvec;
  struct Out {
    std::shared_ptr<void>* p;
    int64_t n;
    DType dt;
  };
  for (const Out& t : {Out{&o, n_act, dt}, Out{&l, n_stat, DType::kF32}}) {
    auto m = Alloc(t.n, t.dt);
    if (absl::IsResourceExhausted(m.status())) return oom_both();
    RETURN_IF_ERROR(m.status());
    *t.p = *m;
  }
  const TensorView vo = MakeView(o.get(), dt, DeviceKind::kCuda, {B, N, H, D});
  const TensorView vl = MakeView(l.get(), DType::kF32, DeviceKind::kCuda, {B, H, N});
  const TensorView fin[] = {vq, vk, vv};
  const TensorView fout[] = {vo, vl};
  auto fwd = [&]() -> absl::Status {
    desc.op = Op::kAttentionFwd;
    return fwd_fn(desc, cuda::In(fin), cuda::Out(fout), ctx);
  };
  auto fwd_ms = Time(fwd);
  fwd_kernel = kernel_of(Op::kAttentionFwd);
  if (absl::IsResourceExhausted(fwd_ms.status())) return oom_both();
  RETURN_IF_ERROR(fwd_ms.status());
  Emit("fwd", fwd_kernel, N, D, *fwd_ms, fwd_flops, dev_->Memory().peak_bytes - base, false);

  for (const Out& t : {Out{&dq, n_act, dt}, Out{&dk, n_act, dt}, Out{&dv, n_act, dt},
                       Out{&dvec, n_stat, DType::kF32}}) {
    auto m = Alloc(t.n, t.dt);
    if (absl::IsResourceExhausted(m.status())) {
      Emit("fwd+bwd", fwd_kernel + "+" + bwd_kernel, N, D, 0, 0, 0, true);
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(m.status());
    *t.p = *m;
  }
  const TensorView bin[] = {vq, vk, vv, vo, vdo, vl};
  const TensorView bout[] = {MakeView(dq.get(), dt, DeviceKind::kCuda, {B, N, H, D}),
                             MakeView(dk.get(), dt, DeviceKind::kCuda, {B, N, H, D}),
                             MakeView(dv.get(), dt, DeviceKind::kCuda, {B, N, H, D}),
                             MakeView(dvec.get(), DType::kF32, DeviceKind::kCuda, {B, H, N})};
  auto fwd_bwd = [&]() -> absl::Status {
    RETURN_IF_ERROR(fwd());
    desc.op = Op::kAttentionBwd;
    return bwd_fn(desc, cuda::In(bin), cuda::Out(bout), ctx);
  };
  auto fb_ms = Time(fwd_bwd);
  bwd_kernel = kernel_of(Op::kAttentionBwd);
  if (absl::IsResourceExhausted(fb_ms.status())) {
    Emit("fwd+bwd", fwd_kernel + "+" + bwd_kernel, N, D, 0, 0, 0, true);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(fb_ms.status());
  Emit("fwd+bwd", fwd_kernel + "+" + bwd_kernel, N, D, *fb_ms, fwd_flops + bwd_flops,
       dev_->Memory().peak_bytes - base, false);
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) return 2;
  auto dev = cuda::CudaDevice::Create(0);
  if (!dev.ok()) {
    std::fprintf(stderr, "bench_attention: %s\n", std::string(dev.status().message()).c_str());
    return 1;
  }
  (*dev)->context().fwd_splits = o.fwd_splits;
  if (o.check) {
    const absl::Status c = CheckAttentionParity(*dev, o.dtype, o.impls);
    if (!c.ok()) {
      std::fprintf(stderr, "bench_attention: parity check FAILED: %s\n", std::string(c.message()).c_str());
      return 1;
    }
  }
  Bench bench(*dev, o);
  if (absl::Status s = bench.Init(); !s.ok()) {
    std::fprintf(stderr, "bench_attention: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  int rc = 0;
  const size_t k = o.impls.size();
  for (int64_t d : o.ds)
    for (int64_t n : o.ns)
      for (int round = 0; round < o.rounds; ++round)
        for (size_t j = 0; j < k; ++j) {
          const std::string& impl = o.impls[(j + static_cast<size_t>(round)) % k];  // rotated
          bench.set_impl(impl);
          bench.set_round(round);
          if (absl::Status s = bench.Run(n, d); !s.ok()) {
            std::fprintf(stderr, "bench_attention: impl=%s N=%lld d=%lld: %s\n", impl.c_str(),
                         static_cast<long long>(n), static_cast<long long>(d),
                         std::string(s.message()).c_str());
            // cuDNN refusing a shape is a finding, not a broken bench; anything else fails.
            if (!(impl == "cudnn" && absl::IsUnimplemented(s))) rc = 1;
          }
        }
  return rc;
}

}  // namespace
}  // namespace flashtick::bench

int main(int argc, char** argv) { return flashtick::bench::Main(argc, argv); }
