// The full training graph on the CPU in f64 (trainer/transformer_graph.h): the
// gradient against central finite differences of the loss, the exact Hessian-vector
// product against finite differences of the gradient, and the symmetry of the HVP
// (⟨u, Hv⟩ = ⟨v, Hu⟩), on a tiny two-layer GQA model with ignored labels.
#include <cstdio>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "trainer/param_store.h"
#include "trainer/transformer_graph.h"
#include "model/transformer.h"
#include "tests/trainer/train_test_util.h"

namespace flashtick::train_test {
namespace {

struct Fixture {
  std::unique_ptr<Backend> be;
  std::unique_ptr<ParamStore> store;
  std::unique_ptr<TransformerGraph> graph;
  Batch batch;
  double row_weight = 0.0;
};

Fixture Make(int64_t B, int64_t T) {
  Fixture f;
  f.be = *CreateBackend("cpu", BackendOptions{2, 0});
  f.store = *ParamStore::Create(TinyConfig(), DType::kF64, f.be.get());
  EXPECT_TRUE(f.store->InitRandom(7).ok());
  // Larger weights than GPT-2's 0.02 so every layer's curvature shows in the checks.
  auto v = *f.store->ToHost(f.store->values());
  for (auto& x : v) x *= 2.5;
  EXPECT_TRUE(f.store->FromHost(f.store->values(), v).ok());
  auto g = TransformerGraph::Create(f.store.get(), B, T, /*hvp=*/true);
  EXPECT_TRUE(g.ok()) << g.status();
  f.graph = std::move(*g);
  f.batch = MakeBatch(B, T, TinyConfig().features, 11);
  int labelled = 0;
  for (int32_t y : f.batch.labels) labelled += y >= 0;
  f.row_weight = 1.0 / labelled;
  EXPECT_TRUE(f.graph->SetBatch(f.batch.ticks, f.batch.labels, f.row_weight).ok());
  return f;
}

double Loss(Fixture& f) {
  auto l = f.graph->Forward();
  EXPECT_TRUE(l.ok()) << l.status();
  return *l;
}

std::vector<double> Grad(Fixture& f) {
  Loss(f);
  f.store->ResetGrads();
  absl::Status s = f.graph->Backward();
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(f.store->CompleteGrads().ok());
  return *f.store->ToHost(f.store->grads());
}

std::vector<double> RandomDirection(const ParamStore& store, uint64_t seed) {
  TrainRng rng(seed);
  std::vector<double> d(store.layout().total(), 0.0);
  for (const FlatParam& s : store.layout().params())
    for (int64_t j = 0; j < s.numel; ++j) d[s.offset + j] = rng.Normal();
  return d;
}

void SetValues(Fixture& f, const std::vector<double>& theta) {
  ASSERT_TRUE(f.store->FromHost(f.store->values(), theta).ok());
}

TEST(TransformerGraph, GradientMatchesFiniteDifferences) {
  Fixture f = Make(2, 7);
  const std::vector<double> theta = *f.store->ToHost(f.store->values());
  const std::vector<double> g = Grad(f);
  // Every parameter tensor, element by element on its first entries; central
  // differences with Richardson extrapolation (error O(h⁴)).
  double worst = 0.0;
  auto central = [&](int64_t i, double h) {
    std::vector<double> tp = theta;
    tp[i] += h;
    SetValues(f, tp);
    const double lp = Loss(f);
    tp[i] -= 2 * h;
    SetValues(f, tp);
    return (lp - Loss(f)) / (2 * h);
  };
  for (const FlatParam& s : f.store->layout().params()) {
    for (int64_t j = 0; j < std::min<int64_t>(s.numel, 6); ++j) {
      const int64_t i = s.offset + j;
      const double fd = (4 * central(i, 5e-4) - central(i, 1e-3)) / 3;
      const double err = std::fabs(fd - g[i]) / std::max(1e-3, std::fabs(g[i]));
      worst = std::max(worst, err);
      EXPECT_LT(err, 1e-6) << s.spec.name << "[" << j << "]: fd " << fd << " ours " << g[i];
    }
  }
  SetValues(f, theta);
  std::printf("train_graph_grad_vs_fd(B=2,T=7,L=2,GQA): worst rel err %.2e\n", worst);
}

TEST(TransformerGraph, HessianVectorProductMatchesFiniteDifferencesOfGradient) {
  Fixture f = Make(2, 6);
  const std::vector<double> theta = *f.store->ToHost(f.store->values());
  const std::vector<double> v = RandomDirection(*f.store, 21), u = RandomDirection(*f.store, 22);
  Grad(f);
  ASSERT_TRUE(f.store->FromHost(f.store->probe(), v).ok());
  absl::Status s = f.graph->HessianVectorProduct();
  ASSERT_TRUE(s.ok()) << s;
  const std::vector<double> hv = *f.store->ToHost(f.store->hv());
  // (g(θ + εv) − g(θ − εv)) / 2ε, Richardson-extrapolated over ε and ε/2.
  auto central = [&](double eps) {
    std::vector<double> tp = theta, tm = theta;
    for (size_t i = 0; i < theta.size(); ++i) tp[i] += eps * v[i], tm[i] -= eps * v[i];
    SetValues(f, tp);
    const std::vector<double> gp = Grad(f);
    SetValues(f, tm);
    const std::vector<double> gm = Grad(f);
    std::vector<double> d(theta.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = (gp[i] - gm[i]) / (2 * eps);
    return d;
  };
  const std::vector<double> f1 = central(2e-4), f2 = central(1e-4);
  std::vector<double> fd(theta.size());
  for (size_t i = 0; i < fd.size(); ++i) fd[i] = (4 * f2[i] - f1[i]) / 3;
  const double err = RelL2(hv, fd);
  // Per tensor too, so a wrong term in one layer cannot hide behind a large one.
  for (const FlatParam& sp : f.store->layout().params()) {
    std::vector<double> a(hv.begin() + sp.offset, hv.begin() + sp.offset + sp.numel);
    std::vector<double> b(fd.begin() + sp.offset, fd.begin() + sp.offset + sp.numel);
    EXPECT_LT(RelL2(a, b), 1e-6) << sp.spec.name << " |Hv|=" << Norm(b);
  }
  // Symmetry: ⟨u, Hv⟩ = ⟨v, Hu⟩.
  SetValues(f, theta);
  Grad(f);
  ASSERT_TRUE(f.store->FromHost(f.store->probe(), u).ok());
  ASSERT_TRUE(f.graph->HessianVectorProduct().ok());
  const std::vector<double> hu = *f.store->ToHost(f.store->hv());
  const double sym = std::fabs(Dot(u, hv) - Dot(v, hu)) / std::fabs(Dot(u, hv));
  std::printf("train_graph_hvp_vs_fd(B=2,T=6): rel_l2 %.2e; symmetry %.2e\n", err, sym);
  EXPECT_LT(err, 1e-7);
  EXPECT_LT(sym, 1e-12);
}

// Mixed precision: fp64 masters with fp32 compute (the CPU stand-in for fp32 masters with
// bf16 compute on CUDA) exercises the compute copies and the casts of gradient
// contributions; gradient and HVP agree with all-fp64 to fp32 rounding.
TEST(TransformerGraph, MixedPrecisionMatchesFullPrecision) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const ModelConfig c = TinyConfig();
  const Batch batch = MakeBatch(2, 11, c.features, 31);
  std::vector<std::vector<double>> grads, hvs;
  const std::vector<double> v = [&] {
    auto s = *ParamStore::Create(c, DType::kF64, be.get());
    return RandomDirection(*s, 77);
  }();
  for (DType compute : {DType::kF64, DType::kF32}) {
    auto store = *ParamStore::Create(c, DType::kF64, compute, be.get());
    ASSERT_TRUE(store->InitRandom(8).ok());
    auto graph = TransformerGraph::Create(store.get(), 2, 11, /*hvp=*/true);
    ASSERT_TRUE(graph.ok()) << graph.status();
    ASSERT_TRUE((*graph)->SetBatch(batch.ticks, batch.labels, 1.0 / 18).ok());
    ASSERT_TRUE((*graph)->Forward().ok());
    store->ResetGrads();
    absl::Status s = (*graph)->Backward();
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(store->CompleteGrads().ok());
    ASSERT_TRUE(store->FromHost(store->probe(), v).ok());
    s = (*graph)->HessianVectorProduct();
    ASSERT_TRUE(s.ok()) << s;
    grads.push_back(*store->ToHost(store->grads()));
    hvs.push_back(*store->ToHost(store->hv()));
  }
  const double eg = RelL2(grads[1], grads[0]), eh = RelL2(hvs[1], hvs[0]);
  std::printf("train_graph_f32_compute_vs_f64: grad rel_l2 %.1e, hvp rel_l2 %.1e\n", eg, eh);
  EXPECT_GT(eg, 0.0);  // fp32 compute did happen
  EXPECT_LT(eg, 1e-5);
  EXPECT_LT(eh, 1e-4);
}

// The training graph computes the same function as the inference model: same
// initialisation from the same seed, and softmax(logits) equals Transformer::Predict.
TEST(TransformerGraph, ForwardMatchesTransformerPredict) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const ModelConfig c = TinyConfig();
  const int64_t B = 2, T = 9;
  auto store = *ParamStore::Create(c, DType::kF64, be.get());
  ASSERT_TRUE(store->InitRandom(5).ok());
  auto graph = *TransformerGraph::Create(store.get(), B, T, /*hvp=*/false);
  Batch batch = MakeBatch(B, T, c.features, 3);
  ASSERT_TRUE(graph->SetBatch(batch.ticks, batch.labels, 1.0).ok());
  ASSERT_TRUE(graph->Forward().ok());
  std::vector<double> logits(B * T * c.classes);
  ASSERT_TRUE(be->Copy(logits.data(), DeviceKind::kCpu, graph->logits().data, DeviceKind::kCpu,
                       logits.size() * sizeof(double))
                  .ok());
  ModelOptions opt;
  opt.compute_dtype = DType::kF64;
  auto model = Transformer::InitRandom(c, 5, be.get(), opt);
  ASSERT_TRUE(model.ok()) << model.status();
  auto probs = (*model)->Predict(batch.ticks, B, T, /*last_only=*/false);
  ASSERT_TRUE(probs.ok()) << probs.status();
  double worst = 0.0;
  for (int64_t m = 0; m < B * T; ++m) {
    double mx = -1e300, sum = 0.0;
    for (int k = 0; k < c.classes; ++k) mx = std::max(mx, logits[m * c.classes + k]);
    for (int k = 0; k < c.classes; ++k) sum += std::exp(logits[m * c.classes + k] - mx);
    for (int k = 0; k < c.classes; ++k) {
      const double p = std::exp(logits[m * c.classes + k] - mx) / sum;
      worst = std::max(worst, std::fabs(p - (*probs)[m * c.classes + k]));
    }
  }
  // Predict returns fp32 probabilities: agreement to fp32 rounding.
  EXPECT_LT(worst, 1e-6);
  std::printf("train_graph_vs_transformer_predict: max |Δp| %.2e\n", worst);
}

}  // namespace
}  // namespace flashtick::train_test
