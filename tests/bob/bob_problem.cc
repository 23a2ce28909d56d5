// Random problems, the CPU-op runner and error measures for the bob tests.
#include "tests/bob/bob_problem.h"

#include <cmath>
#include <cstdio>
#include <random>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick::bob_test {
namespace {

std::vector<double> Normal(std::mt19937_64& rng, int64_t n) {
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> out(n);
  for (double& x : out) x = dist(rng);
  return out;
}

// Typed host storage for one operand and its view.
struct Operand {
  std::vector<double> f64;
  std::vector<float> f32;
  TensorView view;
};

// A [B, T, heads, D] operand holding `src` (contiguous [B, T, heads, D]); strided
// storage is [B, heads, T, D].
Operand MakeOperand(const std::vector<double>& src, const BobCase& c, int64_t heads, DType dt,
                    bool strided) {
  Operand op;
  const int64_t n = c.B * c.T * heads * c.D;
  void* data = nullptr;
  if (dt == DType::kF64) {
    op.f64.assign(n, 0.0);
    data = op.f64.data();
  } else {
    op.f32.assign(n, 0.0f);
    data = op.f32.data();
  }
  op.view = MakeView(data, dt, DeviceKind::kCpu, {c.B, c.T, heads, c.D});
  if (strided) {
    op.view.strides = {heads * c.T * c.D, c.D, c.T * c.D, 1, 0};
  }
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t t = 0; t < c.T; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t d = 0; d < c.D; ++d) {
          const int64_t at =
              b * op.view.strides[0] + t * op.view.strides[1] + h * op.view.strides[2] + d;
          const double x = src.empty() ? 0.0 : src[((b * c.T + t) * heads + h) * c.D + d];
          if (dt == DType::kF64)
            op.f64[at] = x;
          else
            op.f32[at] = static_cast<float>(x);
        }
  return op;
}

std::vector<double> ReadBack(const Operand& op, const BobCase& c, int64_t heads) {
  std::vector<double> out(c.B * c.T * heads * c.D);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t t = 0; t < c.T; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t d = 0; d < c.D; ++d) {
          const int64_t at =
              b * op.view.strides[0] + t * op.view.strides[1] + h * op.view.strides[2] + d;
          out[((b * c.T + t) * heads + h) * c.D + d] =
              op.view.dtype == DType::kF64 ? op.f64[at] : op.f32[at];
        }
  return out;
}

Operand MakeStats(const std::vector<double>& src, const BobCase& c, DType dt) {
  Operand op;
  void* data = nullptr;
  if (dt == DType::kF64) {
    op.f64 = src;
    data = op.f64.data();
  } else {
    op.f32.assign(src.begin(), src.end());
    data = op.f32.data();
  }
  op.view = MakeView(data, dt, DeviceKind::kCpu, {c.B, c.H, c.T});
  return op;
}

}  // namespace

std::string BobCase::Name() const {
  return absl::StrCat("B=", B, ",T=", T, ",H=", H, ",Hkv=", Hkv, ",D=", D,
                      ",causal=", causal ? 1 : 0);
}

BobProblem BobProblem::Random(const BobCase& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  BobProblem p;
  p.c = c;
  p.scale = 1.0 / std::sqrt(static_cast<double>(c.D));
  p.q = Normal(rng, c.QSize());
  p.k = Normal(rng, c.KvSize());
  p.v = Normal(rng, c.KvSize());
  p.dout = Normal(rng, c.QSize());
  p.gq = Normal(rng, c.QSize());
  p.gk = Normal(rng, c.KvSize());
  p.gv = Normal(rng, c.KvSize());
  p.RecomputeStats();
  return p;
}

void BobProblem::RecomputeStats() {
  o.assign(c.QSize(), 0.0);
  lse.assign(c.StatSize(), 0.0);
  dvec.assign(c.StatSize(), 0.0);
  cpu::BobNaiveForwardStats(config(), q.data(), k.data(), v.data(), dout.data(), o.data(),
                            lse.data(), dvec.data());
}

BobOutputs RunNaive(const BobProblem& p) {
  BobOutputs out{std::vector<double>(p.c.QSize()), std::vector<double>(p.c.KvSize()),
                 std::vector<double>(p.c.KvSize()), std::vector<double>(p.c.QSize())};
  cpu::BobNaiveBwdBwd(p.config(), p.q.data(), p.k.data(), p.v.data(), p.dout.data(), p.gq.data(),
                      p.gk.data(), p.gv.data(), out.ddq.data(), out.ddk.data(), out.ddv.data(),
                      out.dddo.data());
  return out;
}

absl::StatusOr<BobOutputs> RunCpuOp(Backend& backend, const BobProblem& p, DType dtype,
                                    bool strided) {
  const BobCase& c = p.c;
  std::vector<Operand> in;
  in.push_back(MakeOperand(p.q, c, c.H, dtype, strided));
  in.push_back(MakeOperand(p.k, c, c.Hkv, dtype, strided));
  in.push_back(MakeOperand(p.v, c, c.Hkv, dtype, strided));
  in.push_back(MakeOperand(p.o, c, c.H, dtype, strided));
  in.push_back(MakeOperand(p.dout, c, c.H, dtype, strided));
  in.push_back(MakeStats(p.lse, c, dtype));
  in.push_back(MakeStats(p.dvec, c, dtype));
  in.push_back(MakeOperand(p.gq, c, c.H, dtype, strided));
  in.push_back(MakeOperand(p.gk, c, c.Hkv, dtype, strided));
  in.push_back(MakeOperand(p.gv, c, c.Hkv, dtype, strided));
  std::vector<Operand> out;
  out.push_back(MakeOperand({}, c, c.H, dtype, strided));
  out.push_back(MakeOperand({}, c, c.Hkv, dtype, strided));
  out.push_back(MakeOperand({}, c, c.Hkv, dtype, strided));
  out.push_back(MakeOperand({}, c, c.H, dtype, strided));
  std::vector<TensorView> in_views, out_views;
  for (const Operand& op : in) in_views.push_back(op.view);
  for (const Operand& op : out) out_views.push_back(op.view);
  OpDesc desc;
  desc.op = Op::kAttentionBwdBwd;
  desc.dtype = dtype;
  desc.attention.causal = c.causal;
  desc.attention.scale = 0.0f;  // 1/sqrt(D), as p.scale
  RETURN_IF_ERROR(backend.Run(desc, in_views, out_views));
  return BobOutputs{ReadBack(out[0], c, c.H), ReadBack(out[1], c, c.Hkv),
                    ReadBack(out[2], c, c.Hkv), ReadBack(out[3], c, c.H)};
}

double RelL2(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  if (den == 0.0) return want.empty() ? 0.0 : std::sqrt(num / static_cast<double>(want.size()));
  return std::sqrt(num / den);
}

double WorstRelL2(const BobOutputs& got, const BobOutputs& want, std::string* which) {
  const std::vector<double>* g[] = {&got.ddq, &got.ddk, &got.ddv, &got.dddo};
  const std::vector<double>* w[] = {&want.ddq, &want.ddk, &want.ddv, &want.dddo};
  const char* names[] = {"dQ", "dK", "dV", "ddO"};
  double worst = -1.0;
  for (int i = 0; i < 4; ++i) {
    const double e = RelL2(*g[i], *w[i]);
    if (e > worst || std::isnan(e)) {
      worst = e;
      if (which) *which = names[i];
      if (std::isnan(e)) break;
    }
  }
  return worst;
}

bool AllFinite(const BobOutputs& out) {
  for (const auto* v : {&out.ddq, &out.ddk, &out.ddv, &out.dddo})
    for (double x : *v)
      if (!std::isfinite(x)) return false;
  return true;
}

absl::Status WriteOracleInput(const std::string& path, const BobProblem& p) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return absl::InternalError(absl::StrCat("cannot write ", path));
  const int64_t header[6] = {p.c.B, p.c.T, p.c.H, p.c.Hkv, p.c.D, p.c.causal ? 1 : 0};
  bool ok = std::fwrite(header, sizeof(header), 1, f) == 1;
  ok = ok && std::fwrite(&p.scale, sizeof(double), 1, f) == 1;
  for (const auto* v : {&p.q, &p.k, &p.v, &p.dout, &p.gq, &p.gk, &p.gv})
    ok = ok && std::fwrite(v->data(), sizeof(double), v->size(), f) == v->size();
  ok = (std::fclose(f) == 0) && ok;
  return ok ? absl::OkStatus() : absl::InternalError(absl::StrCat("short write to ", path));
}

absl::Status ReadOracleOutput(const std::string& path, const BobCase& c, BobOutputs* out,
                              std::vector<double>* o, std::vector<double>* lse,
                              std::vector<double>* dvec) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat("the JAX oracle wrote no ", path));
  out->ddq.resize(c.QSize());
  out->ddk.resize(c.KvSize());
  out->ddv.resize(c.KvSize());
  out->dddo.resize(c.QSize());
  o->resize(c.QSize());
  lse->resize(c.StatSize());
  dvec->resize(c.StatSize());
  bool ok = true;
  for (auto* v : {&out->ddq, &out->ddk, &out->ddv, &out->dddo, o, lse, dvec})
    ok = ok && std::fread(v->data(), sizeof(double), v->size(), f) == v->size();
  std::fclose(f);
  return ok ? absl::OkStatus() : absl::DataLossError(absl::StrCat(path, " is short"));
}

}  // namespace flashtick::bob_test
