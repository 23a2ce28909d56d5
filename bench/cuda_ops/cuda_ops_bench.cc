// Times flash_cuda's non-attention ops at the shapes one training step of the tick
// model runs them (B·T = 8 × 23,400 rows, width C = 768, MLP 4C, 12 heads of 64), every
// buffer far larger than the H200's 50 MB L2, so no flush is needed between reps.
// Prints one JSON line per op (docs/benchmarks.md schema): ms (median of reps), GB/s of the
// bytes the op must move (each operand read or written once), TFLOP/s for matmuls.
// Usage: cuda_ops_bench [--dtype bf16|fp16|fp32] [--reps 20] [--commit SHA]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "kernels/backend.h"

namespace flashtick {
namespace {

struct Buf {
  std::shared_ptr<void> mem;
  TensorView view;
};

class Bench {
 public:
  Bench(Backend* b, DType dt, int reps, std::string gpu, std::string commit)
      : b_(b), dt_(dt), reps_(reps), gpu_(std::move(gpu)), commit_(std::move(commit)) {}

  // A device tensor filled with small pseudo-random values of `dtype`.
  Buf Make(DType dtype, std::vector<int64_t> shape) {
    Buf t;
    t.view = MakeView(nullptr, dtype, DeviceKind::kCuda, shape.data(), static_cast<int>(shape.size()));
    auto mem = b_->Allocate(t.view.bytes());
    if (!mem.ok()) Die(mem.status().ToString());
    t.mem = *mem;
    t.view.data = t.mem.get();
    if (dtype == DType::kI32) {  // labels: class 0 everywhere
      Check(b_->Zero(t.view.data, t.view.bytes()));
      return t;
    }
    // Fill as fp32 on the host in slabs, then cast on the device.
    const int64_t n = t.view.numel();
    constexpr int64_t kSlab = int64_t{1} << 24;
    std::vector<float> host(std::min(n, kSlab));
    uint32_t s = 12345u + static_cast<uint32_t>(n);
    for (auto& x : host) s = s * 1664525u + 1013904223u, x = (s >> 8) * (1.0f / 16777216.0f) - 0.5f;
    auto tmp = b_->Allocate(host.size() * sizeof(float));
    if (!tmp.ok()) Die(tmp.status().ToString());
    for (int64_t off = 0; off < n; off += kSlab) {
      const int64_t len = std::min(kSlab, n - off);
      Check(b_->Copy(tmp->get(), DeviceKind::kCuda, host.data(), DeviceKind::kCpu, len * 4));
      OpDesc cast;
      cast.op = Op::kCast;
      cast.dtype = DType::kF32;
      TensorView src = MakeView(tmp->get(), DType::kF32, DeviceKind::kCuda, {len});
      TensorView dst = MakeView(static_cast<char*>(t.view.data) + off * DTypeSize(dtype), dtype,
                                DeviceKind::kCuda, {len});
      Check(b_->Run(cast, {src}, {dst}));
    }
    Check(b_->Synchronize());
    return t;
  }

  // Times `run`; `bytes` and `flops` per call give GB/s and TFLOP/s.
  void Time(const std::string& op, const std::string& shape, double bytes, double flops,
            const std::function<absl::Status()>& run) {
    for (int i = 0; i < 3; ++i) Check(run());
    Check(b_->Synchronize());
    std::vector<double> ms;
    for (int i = 0; i < reps_; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      Check(run());
      Check(b_->Synchronize());
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    std::printf("{\"bench\":\"cuda_ops\",\"op\":\"%s\",\"impl\":\"flashtick_flash_cuda\",%s,"
                "\"dtype\":\"%s\",\"ms\":%.4f,\"gbps\":%.1f,\"tflops\":%.2f,\"gpu\":\"%s\","
                "\"commit\":\"%s\"}\n",
                op.c_str(), shape.c_str(), DTypeName(dt_), med, bytes / med * 1e-6,
                flops / med * 1e-9, gpu_.c_str(), commit_.c_str());
    std::fflush(stdout);
  }

  static void Check(const absl::Status& s) {
    if (!s.ok()) Die(s.ToString());
  }
  [[noreturn]] static void Die(const std::string& why) {
    std::fprintf(stderr, "cuda_ops_bench: %s\n", why.c_str());
    std::exit(1);
  }

  Backend* b_;
  DType dt_;
  int reps_;
  std::string gpu_, commit_;
};

OpDesc Desc(Op op, DType dt) {
  OpDesc d;
  d.op = op;
  d.dtype = dt;
  return d;
}

void RunAll(Bench& k, DType dt) {
  constexpr int64_t B = 8, T = 23400, C = 768, H = 12, D = 64, K = 3;
  const int64_t R = B * T;
  const double es = static_cast<double>(DTypeSize(dt));
  const double act = static_cast<double>(R * C) * es;  // one [R, C] activation
  const std::string rc = absl::StrFormat("\"B\":%d,\"T\":%d,\"C\":%d", B, T, C);
  Buf x = k.Make(dt, {R, C}), y = k.Make(dt, {R, C}), dy = k.Make(dt, {R, C});
  Buf gx = k.Make(dt, {R, C}), o1 = k.Make(dt, {R, C}), o2 = k.Make(dt, {R, C});
  Buf gamma = k.Make(DType::kF32, {C}), beta = k.Make(DType::kF32, {C});
  Buf p1 = k.Make(DType::kF32, {C}), p2 = k.Make(DType::kF32, {C});
  Buf mean = k.Make(DType::kF32, {R}), rstd = k.Make(DType::kF32, {R});
  Backend* be = k.b_;
  auto run = [&](OpDesc d, std::initializer_list<TensorView> in, std::initializer_list<TensorView> out) {
    return be->Run(d, absl::Span<const TensorView>(in.begin(), in.size()),
                   absl::Span<const TensorView>(out.begin(), out.size()));
  };
  k.Time("layernorm", rc, 2 * act, 0, [&] {
    return run(Desc(Op::kLayerNorm, dt), {x.view, gamma.view, beta.view}, {y.view, mean.view, rstd.view});
  });
  k.Time("layernorm_bwd", rc, 3 * act, 0, [&] {
    return run(Desc(Op::kLayerNormBwd, dt), {x.view, gamma.view, dy.view}, {o1.view, p1.view, p2.view});
  });
  k.Time("layernorm_bwd_bwd", rc, 5 * act, 0, [&] {
    return run(Desc(Op::kLayerNormBwdBwd, dt),
               {x.view, gamma.view, dy.view, gx.view, p1.view, p2.view}, {o1.view, beta.view, o2.view});
  });
  k.Time("gelu", rc, 2 * act, 0, [&] { return run(Desc(Op::kGelu, dt), {x.view}, {y.view}); });
  k.Time("gelu_bwd", rc, 3 * act, 0, [&] {
    return run(Desc(Op::kGeluBwd, dt), {x.view, dy.view}, {o1.view});
  });
  k.Time("gelu_bwd_bwd", rc, 5 * act, 0, [&] {
    return run(Desc(Op::kGeluBwdBwd, dt), {x.view, dy.view, gx.view}, {o1.view, o2.view});
  });
  k.Time("add", rc, 3 * act, 0, [&] { return run(Desc(Op::kAdd, dt), {x.view, dy.view}, {y.view}); });
  k.Time("add_bias", rc, 2 * act, 0, [&] {
    return run(Desc(Op::kAddBias, dt), {x.view, gamma.view}, {y.view});
  });
  k.Time("bias_grad", rc, act, 0, [&] { return run(Desc(Op::kBiasGrad, dt), {dy.view}, {p1.view}); });
  k.Time("softmax", rc, 2 * act, 0, [&] { return run(Desc(Op::kSoftmax, dt), {x.view}, {y.view}); });
  {
    OpDesc d = Desc(Op::kRope, dt);
    d.rope.position_offset = 0;
    TensorView q = MakeView(x.view.data, dt, DeviceKind::kCuda, {B, T, H, D});
    TensorView r = MakeView(y.view.data, dt, DeviceKind::kCuda, {B, T, H, D});
    k.Time("rope", absl::StrFormat("\"B\":%d,\"T\":%d,\"H\":%d,\"d\":%d", B, T, H, D), 2 * act, 0,
           [&] { return run(d, {q}, {r}); });
  }
  {
    Buf logits = k.Make(dt, {R, K}), dlogits = k.Make(dt, {R, K});
    Buf labels = k.Make(DType::kI32, {R}), loss = k.Make(DType::kF32, {R});
    Bench::Check(be->Zero(labels.view.data, labels.view.bytes()));
    const std::string s = absl::StrFormat("\"B\":%d,\"T\":%d,\"K\":%d", B, T, K);
    const double bytes = static_cast<double>(R) * (K * es * 2 + 8);
    k.Time("softmax_cross_entropy_bwd", s, bytes, 0, [&] {
      return run(Desc(Op::kSoftmaxCrossEntropyBwd, dt), {logits.view, labels.view, loss.view},
                 {dlogits.view});
    });
  }
  {
    const int64_t n = int64_t{50} << 20;  // 50M fp32 parameters
    Buf g = k.Make(DType::kF32, {n}), w = k.Make(DType::kF32, {n});
    Buf m = k.Make(DType::kF32, {n}), v = k.Make(DType::kF32, {n});
    Bench::Check(be->Zero(v.view.data, v.view.bytes()));
    OpDesc d = Desc(Op::kAdamW, DType::kF32);
    d.optimizer.lr = 1e-9f;  // keep the weights finite over the reps
    k.Time("adamw", absl::StrFormat("\"n\":%d", n), 7.0 * n * 4, 0, [&] {
      return run(d, {g.view}, {w.view, m.view, v.view});
    });
  }
  for (int64_t N : {C, 4 * C}) {  // x·Wᵀ for attn.proj-like and mlp.fc1
    Buf w = k.Make(dt, {N, C}), out = k.Make(dt, {R, N});
    OpDesc d = Desc(Op::kMatmul, dt);
    d.matmul.trans_b = true;
    const double flops = 2.0 * R * N * C;
    k.Time("matmul", absl::StrFormat("\"M\":%d,\"N\":%d,\"K\":%d", R, N, C),
           es * (R * C + N * C + R * N), flops, [&] { return run(d, {x.view, w.view}, {out.view}); });
    // The linear layer as the model runs it: + b [N] (fp32) in cuBLASLt's epilogue.
    Buf bias = k.Make(DType::kF32, {N});
    d.matmul.bias = true;
    k.Time("matmul_bias", absl::StrFormat("\"M\":%d,\"N\":%d,\"K\":%d", R, N, C),
           es * (R * C + N * C + R * N) + 4.0 * N, flops, [&] {
             return run(d, {x.view, w.view, bias.view}, {out.view});
           });
  }
}

}  // namespace
}  // namespace flashtick

int main(int argc, char** argv) {
  using namespace flashtick;
  DType dt = DType::kBF16;
  int reps = 20;
  std::string commit = "unknown";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--dtype") dt = v == "fp16" ? DType::kF16 : v == "fp32" ? DType::kF32 : DType::kBF16;
    else if (a == "--reps") reps = std::max(1, std::atoi(v.c_str()));
    else if (a == "--commit") commit = v;
  }
  auto backend = CreateBackend("cuda");
  if (!backend.ok()) Bench::Die(backend.status().ToString());
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::string gpu = prop.name;
  for (auto& ch : gpu) if (ch == ' ') ch = '_';
  Bench k(backend->get(), dt, reps, gpu, commit);
  RunAll(k, dt);
  return 0;
}
