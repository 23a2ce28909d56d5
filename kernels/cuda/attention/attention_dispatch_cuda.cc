// The CUDA attention forward and backward (Op::kAttentionFwd, kAttentionBwd): ours or
// cuDNN's per shape bucket, as kernels/attention_dispatch.h decides. This file only
// supplies what the decision needs from the GPU: whether cuDNN accepts the call, and
// timings of both implementations on the call's own tensors (the outputs are
// overwritten by the real run right after, and no input is written by either).
//
// Mode: FLASHTICK_ATTENTION_IMPL=auto|flash|cudnn|flash_sm90a (default auto), or
// SetAttentionImplOverride() from a command-line flag (--attention-impl). Cache file:
// FLASHTICK_ATTENTION_CACHE=<path> ("off": memory only); default
// $XDG_CACHE_HOME/flashtick/attention_impl.json, else ~/.cache/flashtick/... .
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/attention_dispatch.h"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {
namespace {

AttentionImpl ModeFromEnv() {
  static const AttentionImpl mode = [] {
    const char* v = std::getenv("FLASHTICK_ATTENTION_IMPL");
    if (v == nullptr || *v == '\0') return AttentionImpl::kAuto;
    auto m = ParseAttentionImpl(v);
    if (!m.ok()) {
      std::fprintf(stderr, "flashtick attention: FLASHTICK_ATTENTION_IMPL: %s; using auto\n",
                   std::string(m.status().message()).c_str());
      return AttentionImpl::kAuto;
    }
    return *m;
  }();
  return mode;
}

AttentionImpl CurrentMode() {
  const std::optional<AttentionImpl> flag = AttentionImplOverride();
  return flag ? *flag : ModeFromEnv();
}

std::string CachePath() {
  if (const char* v = std::getenv("FLASHTICK_ATTENTION_CACHE"); v != nullptr && *v != '\0')
    return std::string(v) == "off" ? std::string() : std::string(v);
  std::filesystem::path dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0')
    dir = x;
  else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    dir = std::filesystem::path(h) / ".cache";
  else
    return "";
  dir /= "flashtick";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "";
  return (dir / "attention_impl.json").string();
}

// One dispatcher per GPU name (a host may mix models); created on first use. The
// device → dispatcher lookup is cached: cudaGetDeviceProperties is too slow for every
// attention call.
AttentionDispatcher& DispatcherFor(int device) {
  static std::mutex mu;
  static auto* by_name = new std::map<std::string, std::unique_ptr<AttentionDispatcher>>();
  static auto* by_device = new std::map<int, AttentionDispatcher*>();
  std::lock_guard<std::mutex> l(mu);
  AttentionDispatcher*& d = (*by_device)[device];
  if (d == nullptr) {
    cudaDeviceProp prop{};
    std::string name = "unknown_gpu";
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess)
      name = prop.name;
    else
      cudaGetLastError();
    auto& owned = (*by_name)[name];
    if (!owned) {
      AttentionDispatcher::Options o;
      o.mode = CurrentMode();
      o.cache_path = CachePath();
      o.env.gpu = name;
      int driver = 0;
      if (cudaDriverGetVersion(&driver) != cudaSuccess) cudaGetLastError();
      o.env.driver = driver;
      o.env.cudnn = CudnnAttentionVersion();
      owned = std::make_unique<AttentionDispatcher>(std::move(o));
    }
    d = owned.get();
  }
  d->set_mode(CurrentMode());
  return *d;
}

// The last implementation each (op, dtype, head dim, masking) ran with, for KernelPath.
struct LastChoices {
  std::mutex mu;
  std::map<std::string, AttentionImpl> last;
};
LastChoices& Last() {
  static auto* l = new LastChoices();
  return *l;
}
std::string LastKey(Op op, DType dt, int64_t d, bool causal) {
  return absl::StrCat(OpName(op), "|", DTypeName(dt), "|", d, "|", causal);
}

// Median ms of `fn` over a few reps on the context's stream (after one warm-up, which
// also builds cuDNN's graph or sets our kernels' attributes).
absl::StatusOr<double> TimeOnStream(const std::function<absl::Status()>& fn, cudaStream_t stream) {
  RETURN_IF_ERROR(fn());
  cudaEvent_t start = nullptr, stop = nullptr;
  RETURN_IF_CUDA_ERROR(cudaEventCreate(&start));
  std::shared_ptr<void> free_start(nullptr, [start](void*) { cudaEventDestroy(start); });
  RETURN_IF_CUDA_ERROR(cudaEventCreate(&stop));
  std::shared_ptr<void> free_stop(nullptr, [stop](void*) { cudaEventDestroy(stop); });
  std::vector<float> ms;
  constexpr int kReps = 5;
  for (int i = 0; i < kReps; ++i) {
    RETURN_IF_CUDA_ERROR(cudaEventRecord(start, stream));
    RETURN_IF_ERROR(fn());
    RETURN_IF_CUDA_ERROR(cudaEventRecord(stop, stream));
    RETURN_IF_CUDA_ERROR(cudaEventSynchronize(stop));
    float t = 0;
    RETURN_IF_CUDA_ERROR(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return static_cast<double>(ms[ms.size() / 2]);
}

bool Capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &st) != cudaSuccess) {
    cudaGetLastError();
    return true;  // unknown: do not time
  }
  return st != cudaStreamCaptureStatusNone;
}

using OpFn = absl::Status (*)(const OpDesc&, In, Out, CudaContext&);

absl::Status Dispatch(const OpDesc& desc, In in, Out out, CudaContext& ctx, OpFn flash_fn, OpFn cudnn_fn) {
  const AttentionImpl mode = CurrentMode();
  if (mode == AttentionImpl::kFlash || mode == AttentionImpl::kFlashSm90a)
    return flash_fn(desc, in, out, ctx);
  // Shapes first: bad input gets the error every backend gives (kernels/ops/attention.h).
  RETURN_IF_ERROR(CheckAttentionArity(desc.op, in.size(), out.size()));
  AttentionShape s;
  RETURN_IF_ERROR(CheckAttentionArgs(in[0], in[1], in[2], &s));
  const DType dt = in[0].dtype;
  if (!CudnnAttentionBuilt()) {
    static std::once_flag once;
    std::call_once(once, [] {
      std::fprintf(stderr,
                   "flashtick attention: this build has no cuDNN backend; attention runs ours (flash)\n");
    });
    return flash_fn(desc, in, out, ctx);
  }
  int device = 0;
  RETURN_IF_CUDA_ERROR(cudaGetDevice(&device));
  AttentionDispatcher& dispatcher = DispatcherFor(device);
  const AttentionBucket bucket = MakeAttentionBucket(
      desc.op == Op::kAttentionFwd ? AttentionDirection::kFwd : AttentionDirection::kBwd, dt, s,
      desc.attention.causal);
  // Builds (once) cuDNN's graph for this exact shape; asked only when cuDNN might run.
  auto cudnn_supported = [&] { return CudnnAttentionPrepare(desc, in, out, ctx).ok(); };
  AttentionDispatcher::Timer timer;
  if (!Capturing(ctx.stream)) {
    timer = [&](AttentionImpl impl) -> absl::StatusOr<double> {
      OpFn fn = impl == AttentionImpl::kCudnn ? cudnn_fn : flash_fn;
      return TimeOnStream([&] { return fn(desc, in, out, ctx); }, ctx.stream);
    };
  }
  const AttentionChoice choice = dispatcher.Choose(bucket, cudnn_supported, timer);
  {
    std::lock_guard<std::mutex> l(Last().mu);
    Last().last[LastKey(desc.op, dt, s.D, desc.attention.causal)] = choice.impl;
  }
  return choice.impl == AttentionImpl::kCudnn ? cudnn_fn(desc, in, out, ctx) : flash_fn(desc, in, out, ctx);
}

}  // namespace

bool FlashSm90aAsked() { return CurrentMode() == AttentionImpl::kFlashSm90a; }
bool BobSm90Chosen(int kernel_head_dim, DType dtype, int sm) {
  // flash: the FA2-style mma.sync kernels everywhere, the sm_90a ones never.
  return CurrentMode() != AttentionImpl::kFlash && sm90::BobSm90Runs(kernel_head_dim, dtype, sm);
}

absl::Status AttentionFwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  return Dispatch(desc, in, out, ctx, &FlashAttentionFwd, &CudnnAttentionFwd);
}

// BackendOptions::deterministic. Our backward adds each key block's dQ share with
// atomics (flash_bwd_kernel.cuh), whose order varies between runs, and so does cuDNN's
// default engine; cuDNN's deterministic engine (its frontend's
// set_deterministic_algorithm, an ordered dQ accumulation on Hopper) is the one that
// repeats bit for bit, so it is the only choice, and where it cannot run the call fails
// rather than run something that does not repeat (docs/kernels/cudnn.md,
// "Deterministic backward").
absl::Status DeterministicAttentionBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  RETURN_IF_ERROR(CheckAttentionArity(desc.op, in.size(), out.size()));
  AttentionShape s;
  RETURN_IF_ERROR(CheckAttentionArgs(in[0], in[1], in[2], &s));
  const AttentionImpl mode = CurrentMode();
  if (mode == AttentionImpl::kFlash || mode == AttentionImpl::kFlashSm90a)
    return absl::FailedPreconditionError(absl::StrCat(
        "deterministic attention backward: attention mode ", AttentionImplName(mode),
        " runs only our kernels, which add dQ with atomics; use auto or cudnn"));
  if (!CudnnAttentionBuilt())
    return absl::FailedPreconditionError(
        "deterministic attention backward needs cuDNN's deterministic SDPA backward, and this "
        "build has no cuDNN backend (docs/kernels/cudnn.md)");
  if (absl::Status st = CudnnAttentionPrepare(desc, in, out, ctx); !st.ok())
    return absl::FailedPreconditionError(absl::StrCat(
        "deterministic attention backward: cuDNN has no deterministic engine for this shape (D ",
        s.D, ", T ", s.T, "): ", st.message()));
  {
    std::lock_guard<std::mutex> l(Last().mu);
    Last().last[LastKey(desc.op, in[0].dtype, s.D, desc.attention.causal)] = AttentionImpl::kCudnn;
  }
  return CudnnAttentionBwd(desc, in, out, ctx);
}

absl::Status AttentionBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  if (ctx.deterministic) return DeterministicAttentionBwd(desc, in, out, ctx);
  return Dispatch(desc, in, out, ctx, &FlashAttentionBwd, &CudnnAttentionBwd);
}

std::string DispatchedAttentionKernelPath(const OpDesc& desc, int head_dim, const CudaContext& ctx) {
  const std::string ours = AttentionKernelPath(desc, head_dim, ctx);
  if (desc.op != Op::kAttentionFwd && desc.op != Op::kAttentionBwd) return ours;
  // Deterministic: cuDNN's engine or a refusal (DeterministicAttentionBwd), never ours.
  if (desc.op == Op::kAttentionBwd && ctx.deterministic) return CudnnAttentionKernelPath(desc, head_dim, ctx);
  const AttentionImpl mode = CurrentMode();
  if (mode == AttentionImpl::kFlash || mode == AttentionImpl::kFlashSm90a || !CudnnAttentionBuilt())
    return ours;
  std::optional<AttentionImpl> last;
  {
    std::lock_guard<std::mutex> l(Last().mu);
    auto it = Last().last.find(LastKey(desc.op, desc.dtype, head_dim, desc.attention.causal));
    if (it != Last().last.end()) last = it->second;
  }
  const std::string theirs = CudnnAttentionKernelPath(desc, head_dim, ctx);
  if (last) return *last == AttentionImpl::kCudnn ? theirs : ours;
  if (mode == AttentionImpl::kCudnn) return theirs;
  return absl::StrCat("attention_auto(", ours, "|", theirs, ")");
}

}  // namespace flashtick::cuda
