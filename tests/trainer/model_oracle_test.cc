// The whole model against JAX float64 (tests/trainer/jax_model_oracle.py): our weights
// written as safetensors and loaded by the script, which implements the same model
// independently and returns the loss, the gradient and Hessian-vector products (jvp of
// grad). Ours: the training graph on the CPU in f64 (backward, and reverse-over-reverse
// HVP through AttentionBwdBwd). Two configs: multi-head GQA with two layers, and
// plain multi-head attention with T = 1 (every row attends only to itself).
// Tolerances (f64 on both sides, different summation orders): loss 1e-12 relative,
// gradient and HVP 1e-10 relative L2 per parameter tensor.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "common/file_io.h"
#include "model/safetensors.h"
#include "trainer/param_store.h"
#include "trainer/transformer_graph.h"
#include "tests/trainer/train_test_util.h"

namespace flashtick::train_test {
namespace {

struct Case {
  const char* name;
  ModelConfig config;
  int64_t B, T;
};

std::vector<double> Flat(const Safetensors& st, const std::string& prefix, const ParamLayout& l) {
  std::vector<double> out(l.total(), 0.0);
  for (const FlatParam& p : l.params()) {
    const SafetensorsTensor& t = st.tensors().at(prefix + p.spec.name);
    EXPECT_EQ(t.dtype, DType::kF64) << prefix << p.spec.name;
    std::memcpy(out.data() + p.offset, t.data.data(), p.numel * sizeof(double));
  }
  return out;
}

struct Prepared {
  std::unique_ptr<Backend> be;
  std::unique_ptr<ParamStore> store;
  Batch batch;
  std::vector<std::vector<double>> probes;
  std::string dir;
};

// Writes the case's config, weights, batch and probes for the oracle.
void Prepare(const Case& c, Prepared* out) {
  auto& be = out->be;
  be = *CreateBackend("cpu", BackendOptions{2, 0});
  out->store = *ParamStore::Create(c.config, DType::kF64, be.get());
  auto& store = out->store;
  ASSERT_TRUE(store->InitRandom(17).ok());
  // Weights well away from initialisation, so every term of the Hessian is exercised.
  TrainRng rng(99);
  std::vector<double> w = *store->ToHost(store->values());
  for (const FlatParam& p : store->layout().params())
    for (int64_t j = 0; j < p.numel; ++j) w[p.offset + j] += 0.3 * rng.Normal();
  ASSERT_TRUE(store->FromHost(store->values(), w).ok());
  out->batch = MakeBatch(c.B, c.T, c.config.features, 23);
  const Batch& batch = out->batch;
  out->dir = absl::StrCat(::testing::TempDir(), "/model_oracle_", c.name, "_", getpid());
  const std::string& dir = out->dir;
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/config.json", c.config.ToJson()).ok());
  Safetensors weights, inputs;
  ASSERT_TRUE(store->AddTo(&weights, "", store->values()).ok());
  ASSERT_TRUE(weights.WriteFile(dir + "/weights.safetensors").ok());
  ASSERT_TRUE(
      inputs.Add("ticks", DType::kF32, {c.B, c.T, c.config.features}, batch.ticks.data()).ok());
  ASSERT_TRUE(inputs.Add("labels", DType::kI32, {c.B, c.T}, batch.labels.data()).ok());
  auto& probes = out->probes;
  for (int i = 0; i < 2; ++i) {
    std::vector<double> v(store->layout().total(), 0.0);
    for (const FlatParam& p : store->layout().params())
      for (int64_t j = 0; j < p.numel; ++j) v[p.offset + j] = rng.Normal();
    probes.push_back(v);
    for (const FlatParam& p : store->layout().params())
      ASSERT_TRUE(inputs
                      .Add(absl::StrCat("v", i, ".", p.spec.name), DType::kF64, p.spec.shape,
                           v.data() + p.offset)
                      .ok());
  }
  ASSERT_TRUE(inputs.WriteFile(dir + "/inputs.safetensors").ok());
}

// Runs ours on the prepared case and compares with the oracle's outputs.
void Check(const Case& c, Prepared& in) {
  const std::string& dir = in.dir;
  auto& store = in.store;
  const Batch& batch = in.batch;
  auto oracle = Safetensors::ReadFile(dir + "/oracle.safetensors");
  ASSERT_TRUE(oracle.ok()) << oracle.status();

  auto graph = *TransformerGraph::Create(store.get(), c.B, c.T, /*hvp=*/true);
  int labelled = 0;
  for (int32_t y : batch.labels) labelled += y >= 0;
  ASSERT_TRUE(graph->SetBatch(batch.ticks, batch.labels, 1.0 / labelled).ok());
  auto loss = graph->Forward();
  ASSERT_TRUE(loss.ok()) << loss.status();
  store->ResetGrads();
  ASSERT_TRUE(graph->Backward().ok());
  ASSERT_TRUE(store->CompleteGrads().ok());
  const double want_loss =
      *reinterpret_cast<const double*>(oracle->tensors().at("loss").data.data());
  EXPECT_NEAR(*loss, want_loss, 1e-12 * want_loss) << c.name;
  const std::vector<double> grad = *store->ToHost(store->grads());
  const std::vector<double> jgrad = Flat(*oracle, "grad.", store->layout());
  double worst_g = 0, worst_h = 0;
  for (const FlatParam& p : store->layout().params()) {
    std::vector<double> a(grad.begin() + p.offset, grad.begin() + p.offset + p.numel);
    std::vector<double> b(jgrad.begin() + p.offset, jgrad.begin() + p.offset + p.numel);
    worst_g = std::max(worst_g, RelL2(a, b));
    EXPECT_LT(RelL2(a, b), 1e-10) << c.name << " grad " << p.spec.name;
  }
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(store->FromHost(store->probe(), in.probes[i]).ok());
    ASSERT_TRUE(graph->HessianVectorProduct().ok());
    const std::vector<double> hv = *store->ToHost(store->hv());
    const std::vector<double> jhv = Flat(*oracle, absl::StrCat("hv", i, "."), store->layout());
    for (const FlatParam& p : store->layout().params()) {
      std::vector<double> a(hv.begin() + p.offset, hv.begin() + p.offset + p.numel);
      std::vector<double> b(jhv.begin() + p.offset, jhv.begin() + p.offset + p.numel);
      worst_h = std::max(worst_h, RelL2(a, b));
      EXPECT_LT(RelL2(a, b), 1e-10) << c.name << " hv" << i << " " << p.spec.name;
    }
  }
  std::printf(
      "model_cpu_vs_jax(%s, B=%ld, T=%ld): loss %.17g (jax %.17g); worst rel_l2 grad %.1e, "
      "hvp %.1e\n",
      c.name, long(c.B), long(c.T), *loss, want_loss, worst_g, worst_h);
  std::filesystem::remove_all(dir);
}

TEST(ModelOracle, LossGradientAndHvpMatchJaxFloat64) {
  ModelConfig gqa = TinyConfig();
  ModelConfig mha = TinyConfig();
  mha.kv_heads = mha.heads;
  mha.layers = 1;
  mha.mlp_ratio = 4;
  // Partial rotary (kernels/ops/rope.h): half of each D = 8 head rotates, the rest is
  // position-free; GQA so the k rotation of the shared heads is covered too.
  ModelConfig partial = TinyConfig();
  partial.width = 16;
  partial.rotary_dims = 4;
  partial.rope_theta = 500.0f;  // fast enough to turn visibly over 17 steps
  // Fourier input features (model/input_encoding.h) on the spread column: the oracle
  // encodes the raw ticks itself, so the embedding's width and order are checked.
  ModelConfig fourier = TinyConfig();
  fourier.fourier_feature = 1;
  fourier.fourier_periods = {0.75f, 3.0f};
  // Position-free layers (ModelConfig::nope_interval): the second of two layers
  // unrotated, so its attention, gradient and HVP have no rope node.
  ModelConfig nope = partial;
  nope.rotary_dims = -1;
  nope.nope_interval = 2;
  // Attention that excludes the step itself (ModelConfig::exclude_self_layers): the first
  // of two layers reads its keys and values one step later (AttentionNode's shift, its
  // adjoint in the gradient and the HVP's tangents); and T = 1 with the one layer
  // shifted, where the row sees only the zero sink.
  ModelConfig exclude = TinyConfig();
  exclude.exclude_self_layers = 1;
  ModelConfig exclude_all = mha;
  exclude_all.exclude_self_layers = 1;
  const std::vector<Case> cases = {{"gqa_L2", gqa, 2, 13},
                                   {"gqa_L2_exclude_self", exclude, 2, 13},
                                   {"mha_L1_exclude_self", exclude_all, 2, 9},
                                   {"mha_L1_T1_exclude_self", exclude_all, 3, 1},
                                   {"gqa_L2_fourier", fourier, 2, 9},
                                   {"mha_L1_T1", mha, 3, 1},
                                   {"mha_L1", mha, 1, 33},
                                   {"gqa_L2_partial_rotary", partial, 2, 17},
                                   {"gqa_L2_nope_layer", nope, 2, 17}};
  std::vector<Prepared> prepared(cases.size());
  std::string cmd = absl::StrCat("'", FLASHTICK_PYTHON, "' '", FLASHTICK_SOURCE_DIR,
                                 "/tests/trainer/jax_model_oracle.py'");
  for (size_t i = 0; i < cases.size(); ++i) {
    Prepare(cases[i], &prepared[i]);
    absl::StrAppend(&cmd, " '", prepared[i].dir, "'");
  }
  ASSERT_EQ(std::system(cmd.c_str()), 0)
      << "the JAX oracle failed: " << cmd << "\n(needs jax and safetensors in FLASHTICK_PYTHON)";
  for (size_t i = 0; i < cases.size(); ++i) Check(cases[i], prepared[i]);
}

}  // namespace
}  // namespace flashtick::train_test
