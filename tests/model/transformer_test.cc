// The transformer forward on the CPU backend: determinism (same seed -> same bits;
// 1 vs 2 threads within 1e-6), probabilities that sum to one, causality, last_only and
// batch chunking agreeing with the full run, the f64 mode, Save/Load round trip and
// checkpoint mismatches, request validation, and an independent NumPy float64
// implementation of the same forward as the oracle.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "model/params.h"
#include "model/safetensors.h"
#include "model/transformer.h"

namespace flashtick {
namespace {

ModelConfig SmallConfig() {
  ModelConfig c;
  c.width = 32;
  c.heads = 4;
  c.kv_heads = 2;  // grouped-query attention on
  c.layers = 2;
  c.max_context = 4096;
  return c;
}

std::vector<float> Ticks(int64_t B, int64_t T, int64_t F, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(B * T * F);
  for (auto& x : v) x = d(rng);
  return v;
}

std::unique_ptr<Backend> Cpu(int threads) {
  BackendOptions o;
  o.threads = threads;
  return std::move(CreateBackend("cpu", o)).value();
}

std::unique_ptr<Transformer> Make(Backend* be, uint64_t seed, ModelOptions opt = {},
                                  ModelConfig c = SmallConfig()) {
  auto m = Transformer::InitRandom(c, seed, be, opt);
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(m).value();
}

std::string TempDir(const std::string& name) {
  std::string d = ::testing::TempDir() + "/transformer_test_" + std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove_all(d);
  return d;
}

// Skips the rest of a test while the CPU attention forward is not built in.
#define PREDICT_OR_SKIP(var, expr)                                                       \
  auto var##_or = (expr);                                                                \
  if (var##_or.status().code() == absl::StatusCode::kUnimplemented)                      \
    GTEST_SKIP() << var##_or.status();                                                   \
  ASSERT_TRUE(var##_or.ok()) << var##_or.status();                                       \
  std::vector<float> var = std::move(var##_or).value()

TEST(Transformer, DeterministicAndNormalised) {
  auto be = Cpu(2);
  const int64_t B = 2, T = 67, F = 6;
  const auto ticks = Ticks(B, T, F, 1);
  auto m1 = Make(be.get(), 42), m2 = Make(be.get(), 42), m3 = Make(be.get(), 43);
  EXPECT_EQ(m1->kernel_path(), "cpu_reference");
  EXPECT_EQ(m1->compute_dtype(), DType::kF32);
  PREDICT_OR_SKIP(p1, m1->Predict(ticks, B, T, false));
  PREDICT_OR_SKIP(p2, m2->Predict(ticks, B, T, false));
  PREDICT_OR_SKIP(p3, m3->Predict(ticks, B, T, false));
  ASSERT_EQ(p1.size(), size_t(B * T * 3));
  EXPECT_EQ(p1, p2);  // same seed, same bits
  EXPECT_NE(p1, p3);
  for (int64_t r = 0; r < B * T; ++r) {
    double s = 0;
    for (int k = 0; k < 3; ++k) {
      ASSERT_GE(p1[r * 3 + k], 0.0f);
      ASSERT_LE(p1[r * 3 + k], 1.0f);
      s += p1[r * 3 + k];
    }
    ASSERT_NEAR(s, 1.0, 1e-6) << "row " << r;
  }
}

TEST(Transformer, ThreadCountChangesNothingBeyond1e6) {
  auto one = Cpu(1), two = Cpu(2);
  const int64_t B = 1, T = 300, F = 6;
  const auto ticks = Ticks(B, T, F, 2);
  PREDICT_OR_SKIP(a, Make(one.get(), 7)->Predict(ticks, B, T, false));
  PREDICT_OR_SKIP(b, Make(two.get(), 7)->Predict(ticks, B, T, false));
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-6) << i;
}

TEST(Transformer, CausalFutureTicksDoNotChangeThePast) {
  auto be = Cpu(2);
  const int64_t T = 200, F = 6, t = 120;
  auto ticks = Ticks(1, T, F, 3);
  auto m = Make(be.get(), 5);
  PREDICT_OR_SKIP(before, m->Predict(ticks, 1, T, false));
  for (int64_t i = (t + 1) * F; i < T * F; ++i) ticks[i] = 10.0f * ticks[i] + 3.0f;
  PREDICT_OR_SKIP(after, m->Predict(ticks, 1, T, false));
  for (int64_t i = 0; i < (t + 1) * 3; ++i) ASSERT_EQ(before[i], after[i]) << "step " << i / 3;
  bool changed = false;
  for (int64_t i = (t + 1) * 3; i < T * 3; ++i) changed |= before[i] != after[i];
  EXPECT_TRUE(changed);  // the test would mean nothing if the model ignored its input
}

TEST(Transformer, LastOnlyAndBatchChunkingMatchTheFullRun) {
  auto be = Cpu(2);
  const int64_t B = 3, T = 50, F = 6;
  const auto ticks = Ticks(B, T, F, 4);
  auto m = Make(be.get(), 9);
  PREDICT_OR_SKIP(full, m->Predict(ticks, B, T, false));
  PREDICT_OR_SKIP(last, m->Predict(ticks, B, T, true));
  ASSERT_EQ(last.size(), size_t(B * 3));
  for (int64_t b = 0; b < B; ++b)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(last[b * 3 + k], full[(b * T + T - 1) * 3 + k]);
  ModelOptions tiny;
  tiny.workspace_bytes = 1;  // forces one sequence per chunk
  auto chunked = Make(be.get(), 9, tiny);
  PREDICT_OR_SKIP(c, chunked->Predict(ticks, B, T, false));
  EXPECT_EQ(c, full);
  // Each sequence alone gives the same as inside the batch.
  std::vector<float> one(ticks.begin() + T * F, ticks.begin() + 2 * T * F);
  PREDICT_OR_SKIP(s, m->Predict(one, 1, T, false));
  EXPECT_EQ(std::vector<float>(full.begin() + T * 3, full.begin() + 2 * T * 3), s);
}

TEST(Transformer, Float64ModeAgreesWithFloat32) {
  auto be = Cpu(2);
  const int64_t B = 1, T = 90, F = 6;
  const auto ticks = Ticks(B, T, F, 5);
  ModelOptions f64;
  f64.compute_dtype = DType::kF64;
  auto m64 = Make(be.get(), 11, f64);
  EXPECT_EQ(m64->compute_dtype(), DType::kF64);
  PREDICT_OR_SKIP(a, Make(be.get(), 11)->Predict(ticks, B, T, false));
  PREDICT_OR_SKIP(b, m64->Predict(ticks, B, T, false));
  double max_err = 0;
  for (size_t i = 0; i < a.size(); ++i) max_err = std::max(max_err, double(std::fabs(a[i] - b[i])));
  EXPECT_LT(max_err, 1e-5);
  EXPECT_GT(max_err, 0.0);  // they are different computations
  ModelOptions bf;
  bf.compute_dtype = DType::kBF16;
  EXPECT_FALSE(Transformer::InitRandom(SmallConfig(), 1, be.get(), bf).ok());
}

// AttentionWeights reads P(i → j) = exp(s·q_i·k_j − L_i) off the forward: with the
// right scale, log-sum-exp and query-head → key-head map (GQA here: 4 heads, 2 KV), every
// row is a distribution over j ≤ i; a step's weights do not depend on later ticks.
TEST(Transformer, AttentionWeightsAreCausalDistributions) {
  auto be = Cpu(2);
  const int64_t T = 41, F = 6;
  const ModelConfig c = SmallConfig();
  for (DType dt : {DType::kF32, DType::kF64}) {
    ModelOptions opt;
    opt.compute_dtype = dt;
    auto m = Make(be.get(), 7, opt);
    const std::vector<int64_t> rows = {0, 9, 40};
    auto w = m->AttentionWeights(Ticks(1, T, F, 3), T, rows);
    if (w.status().code() == absl::StatusCode::kUnimplemented) GTEST_SKIP() << w.status();
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_EQ(static_cast<int>(w->size()), c.layers);
    const double tol = dt == DType::kF64 ? 1e-6 : 1e-5;  // weights come back as float
    for (const std::vector<float>& layer : *w) {
      ASSERT_EQ(layer.size(), rows.size() * c.heads * T);
      for (size_t r = 0; r < rows.size(); ++r)
        for (int h = 0; h < c.heads; ++h) {
          const float* p = &layer[(r * c.heads + h) * T];
          double sum = 0;
          for (int64_t j = 0; j < T; ++j) {
            if (j > rows[r]) {
              EXPECT_EQ(p[j], 0.0f) << "a weight on a future step";
            }
            EXPECT_GE(p[j], 0.0f);
            sum += p[j];
          }
          EXPECT_NEAR(sum, 1.0, tol) << "row " << rows[r] << " head " << h;
        }
      EXPECT_NEAR(layer[0], 1.0, tol) << "step 0 sees only itself";
    }
    // The same first 41 steps followed by 20 more: step 9's weights are unchanged.
    std::vector<float> longer = Ticks(1, T, F, 3);
    const std::vector<float> extra = Ticks(1, 20, F, 4);
    longer.insert(longer.end(), extra.begin(), extra.end());
    auto w2 = m->AttentionWeights(longer, T + 20, std::vector<int64_t>{9});
    ASSERT_TRUE(w2.ok()) << w2.status();
    for (int l = 0; l < c.layers; ++l)
      for (int h = 0; h < c.heads; ++h)
        for (int64_t j = 0; j <= 9; ++j)
          EXPECT_NEAR((*w2)[l][h * (T + 20) + j], (*w)[l][(1 * c.heads + h) * T + j], tol);
  }
  auto m = Make(be.get(), 7);
  EXPECT_EQ(m->AttentionWeights(Ticks(1, T, F, 3), T, std::vector<int64_t>{T}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m->AttentionWeights(Ticks(1, T, F, 3), T + 1, std::vector<int64_t>{0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// One probe serves any rows afterwards: its weights for a step, asked alone or among
// others and in any layer, are exactly AttentionWeights' for that step; a layer or step
// out of range is refused.
TEST(Transformer, AttentionProbeReadsTheSameRowsOnDemand) {
  auto be = Cpu(2);
  const int64_t T = 37, F = 6;
  const ModelConfig c = SmallConfig();
  auto m = Make(be.get(), 11);
  const std::vector<float> ticks = Ticks(1, T, F, 5);
  const std::vector<int64_t> rows = {3, 20, 36};
  auto w = m->AttentionWeights(ticks, T, rows);
  ASSERT_TRUE(w.ok()) << w.status();
  auto probe = m->ProbeAttention(ticks, T);
  ASSERT_TRUE(probe.ok()) << probe.status();
  ASSERT_EQ(probe->layers(), c.layers);
  EXPECT_EQ(probe->steps(), T);
  for (int l = 0; l < c.layers; ++l) {
    for (size_t r = 0; r < rows.size(); ++r) {
      auto one = probe->Weights(l, std::vector<int64_t>{rows[r]});
      ASSERT_TRUE(one.ok()) << one.status();
      for (int h = 0; h < c.heads; ++h)
        for (int64_t j = 0; j < T; ++j)
          ASSERT_EQ((*one)[h * T + j], (*w)[l][(r * c.heads + h) * T + j]) << l << " " << r;
    }
  }
  EXPECT_EQ(probe->Weights(c.layers, rows).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(probe->Weights(-1, rows).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(probe->Weights(0, std::vector<int64_t>{T}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(probe->Weights(0, std::vector<int64_t>{-1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Transformer, SaveLoadRoundTrip) {
  auto be = Cpu(2);
  const std::string dir = TempDir("rt");
  auto m = Make(be.get(), 21);
  ASSERT_TRUE(m->Save(dir).ok());
  auto loaded = Transformer::Load(dir, be.get());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->config().ToJson(), m->config().ToJson());
  EXPECT_EQ((*loaded)->parameter_count(), m->parameter_count());
  for (const ParamSpec& s : m->params().specs())
    EXPECT_EQ(*m->params().MasterToHost(s.name), *(*loaded)->params().MasterToHost(s.name)) << s.name;
  const auto ticks = Ticks(2, 40, 6, 6);
  PREDICT_OR_SKIP(a, m->Predict(ticks, 2, 40, false));
  PREDICT_OR_SKIP(b, (*loaded)->Predict(ticks, 2, 40, false));
  EXPECT_EQ(a, b);
  // Saving again over the same directory works (atomic replace).
  ASSERT_TRUE((*loaded)->Save(dir).ok());
}

TEST(Transformer, LoadRejectsMismatchedCheckpoints) {
  auto be = Cpu(1);
  const std::string dir = TempDir("bad");
  ASSERT_TRUE(Make(be.get(), 1)->Save(dir).ok());
  const std::string wpath = dir + "/model.safetensors";
  auto st = *Safetensors::ReadFile(wpath);
  // A config.json that disagrees with the weights.
  ModelConfig wide = SmallConfig();
  wide.width = 64;
  { std::ofstream(dir + "/config.json") << wide.ToJson(); }
  auto s = Transformer::Load(dir, be.get());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("embed.weight"), std::string::npos) << s.status();
  { std::ofstream(dir + "/config.json") << SmallConfig().ToJson(); }
  // An extra tensor.
  Safetensors extra = st;
  float one = 1.0f;
  ASSERT_TRUE(extra.Add("stray", DType::kF32, {1}, &one).ok());
  ASSERT_TRUE(extra.WriteFile(wpath).ok());
  s = Transformer::Load(dir, be.get());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("stray"), std::string::npos) << s.status();
  // A NaN weight.
  Safetensors nan = st;
  std::vector<float> b(nan.tensors().at("head.bias").numel(), std::nanf(""));
  ASSERT_TRUE(nan.Add("head.bias", DType::kF32, {3}, b.data()).ok());
  ASSERT_TRUE(nan.WriteFile(wpath).ok());
  EXPECT_FALSE(Transformer::Load(dir, be.get()).ok());
  // Missing files and a corrupt one.
  EXPECT_EQ(Transformer::Load(dir + "/nope", be.get()).status().code(), absl::StatusCode::kNotFound);
  { std::ofstream(wpath) << "garbage"; }
  EXPECT_EQ(Transformer::Load(dir, be.get()).status().code(), absl::StatusCode::kDataLoss);
}

// valid_steps: a window right-padded past its real steps answers from its last real
// step, exactly as the unpadded window's last-step forward does — also with a first
// layer that excludes the step itself (its keys shifted one step later) and with
// sequences chunked one at a time.
TEST(Transformer, PaddedLastStepForwardAnswersFromTheLastRealStep) {
  auto be = Cpu(2);
  const int64_t B = 3, T = 50, F = 6, padded_T = 64, K = 3;
  const auto ticks = Ticks(B, T, F, 21);
  std::vector<float> padded(static_cast<size_t>(B * padded_T * F), 0.0f);
  for (int64_t b = 0; b < B; ++b)
    std::copy(ticks.begin() + b * T * F, ticks.begin() + (b + 1) * T * F, padded.begin() + b * padded_T * F);
  ModelConfig no_self = SmallConfig();
  no_self.exclude_self_layers = 1;
  ModelOptions tiny;
  tiny.workspace_bytes = 1;  // one sequence per chunk
  for (const auto& [config, options] : {std::pair{SmallConfig(), ModelOptions{}},
                                        std::pair{no_self, ModelOptions{}}, std::pair{SmallConfig(), tiny}}) {
    auto m = Make(be.get(), 3, options, config);
    PREDICT_OR_SKIP(want, m->Predict(ticks, B, T, true));
    std::vector<float> got(static_cast<size_t>(B * K));
    ASSERT_TRUE(m->PredictInto(padded, B, padded_T, true, {}, absl::MakeSpan(got), T).ok());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
    // Not the padded window's own last row.
    PREDICT_OR_SKIP(last_row, m->Predict(padded, B, padded_T, true));
    EXPECT_GT(std::abs(last_row[0] - want[0]) + std::abs(last_row[1] - want[1]), 1e-6);
  }
  // Out of range, or asked of a forward of every step: refused.
  auto m = Make(be.get(), 3);
  std::vector<float> out(static_cast<size_t>(B * K));
  for (const int64_t bad : {int64_t{-1}, padded_T + 1}) {
    EXPECT_EQ(m->PredictInto(padded, B, padded_T, true, {}, absl::MakeSpan(out), bad).code(),
              absl::StatusCode::kInvalidArgument) << bad;
  }
  std::vector<float> every(static_cast<size_t>(B * padded_T * K));
  EXPECT_EQ(m->PredictInto(padded, B, padded_T, false, {}, absl::MakeSpan(every), T).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Transformer, PredictValidatesRequests) {
  auto be = Cpu(1);
  auto m = Make(be.get(), 1);
  auto ticks = Ticks(1, 10, 6, 7);
  EXPECT_EQ(m->Predict(ticks, 1, 11, false).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m->Predict(ticks, 0, 10, false).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m->Predict(Ticks(1, 4097, 6, 1), 1, 4097, false).status().code(),
            absl::StatusCode::kResourceExhausted);
  ticks[25] = std::nanf("");
  auto s = m->Predict(ticks, 1, 10, false);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("step 4"), std::string::npos) << s.status();
}

// An independent float64 NumPy forward of the same architecture, reading the saved
// checkpoint: checks the weight layout (fused QKV rows, GQA grouping), interleaved
// RoPE, the tanh GELU, pre-norm residuals and the head, end to end.
// rotary_dims: −1 (the default, the whole head) and even values up to D are valid and
// survive config.json; anything else is refused with the reason.
TEST(ModelConfigRotary, ValidatesAndRoundTrips) {
  ModelConfig c = SmallConfig();  // D = 8
  EXPECT_TRUE(c.Validate().ok()) << c.Validate();
  EXPECT_EQ(c.rotated_dims(), 8);
  for (int r : {-1, 0, 2, 8}) {
    c.rotary_dims = r;
    ASSERT_TRUE(c.Validate().ok()) << r;
    auto back = ModelConfig::FromJson(c.ToJson());
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->rotary_dims, r);
  }
  EXPECT_EQ(ModelConfig::FromJson(R"({"width": 32, "heads": 4, "kv_heads": 2})")->rotary_dims, -1);
  for (int r : {-2, 3, 10}) {
    c.rotary_dims = r;
    const absl::Status s = c.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << r;
    EXPECT_NE(s.message().find("rotary_dims"), std::string::npos) << s;
  }
}

// nope_interval: 0 (every layer rotated) up to the layer count; every k-th layer is then
// unrotated, and the value survives config.json.
TEST(ModelConfigNope, ValidatesRoundTripsAndPicksLayers) {
  ModelConfig c = SmallConfig();  // 2 layers, D = 8
  c.layers = 4;
  c.rotary_dims = 4;
  EXPECT_EQ(c.layer_rotary_dims(3), 4);
  c.nope_interval = 2;
  ASSERT_TRUE(c.Validate().ok()) << c.Validate();
  EXPECT_EQ(c.layer_rotary_dims(0), 4);
  EXPECT_EQ(c.layer_rotary_dims(1), 0);
  EXPECT_EQ(c.layer_rotary_dims(2), 4);
  EXPECT_EQ(c.layer_rotary_dims(3), 0);
  auto back = ModelConfig::FromJson(c.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->nope_interval, 2);
  EXPECT_EQ(ModelConfig::FromJson(R"({"width": 32, "heads": 4, "kv_heads": 2})")->nope_interval, 0);
  for (int k : {-1, 5}) {
    c.nope_interval = k;
    const absl::Status s = c.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << k;
    EXPECT_NE(s.message().find("nope_interval"), std::string::npos) << s;
  }
}

// exclude_self_layers: 0 up to the layer count, the first k layers excluding the step
// itself; it survives config.json and is left out of it when 0.
TEST(ModelConfigExcludeSelf, ValidatesRoundTripsAndPicksLayers) {
  ModelConfig c = SmallConfig();
  c.layers = 3;
  EXPECT_FALSE(c.layer_excludes_self(0));
  EXPECT_EQ(c.ToJson().find("exclude_self_layers"), std::string::npos);
  c.exclude_self_layers = 2;
  ASSERT_TRUE(c.Validate().ok()) << c.Validate();
  EXPECT_TRUE(c.layer_excludes_self(0));
  EXPECT_TRUE(c.layer_excludes_self(1));
  EXPECT_FALSE(c.layer_excludes_self(2));
  auto back = ModelConfig::FromJson(c.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->exclude_self_layers, 2);
  for (int k : {-1, 4}) {
    c.exclude_self_layers = k;
    const absl::Status s = c.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << k;
    EXPECT_NE(s.message().find("exclude_self_layers"), std::string::npos) << s;
  }
}

// In a layer that excludes the step itself, a step's attention is on the steps before
// it only: the probe's weight on the step itself and later is 0, the first step's row
// is all sink (every weight 0), and a later row's weights sum to less than 1, the zero
// sink key's exp(−L) (SinkWeights) making up the rest.
TEST(Transformer, AttentionProbeExcludesTheStepItself) {
  auto be = Cpu(2);
  ModelConfig c = SmallConfig();
  c.exclude_self_layers = 1;
  auto m = Transformer::InitRandom(c, 7, be.get());
  ASSERT_TRUE(m.ok()) << m.status();
  const int64_t T = 12;
  const std::vector<float> ticks = Ticks(1, T, c.features, 3);
  const std::vector<int64_t> rows = {0, 5, 11};
  auto w = (*m)->AttentionWeights(ticks, T, rows);
  ASSERT_TRUE(w.ok()) << w.status();
  auto probe = (*m)->ProbeAttention(ticks, T);
  ASSERT_TRUE(probe.ok()) << probe.status();
  const int64_t H = c.heads;
  for (int layer = 0; layer < c.layers; ++layer) {
    for (size_t r = 0; r < rows.size(); ++r) {
      for (int64_t h = 0; h < H; ++h) {
        const float* p = &(*w)[static_cast<size_t>(layer)][(r * H + h) * T];
        double sum = 0;
        for (int64_t j = 0; j < T; ++j) sum += p[j];
        const auto sink = probe->SinkWeights(layer, rows);
        ASSERT_TRUE(sink.ok()) << sink.status();
        EXPECT_NEAR(sum + (*sink)[r * H + h], 1.0, 1e-4) << "layer " << layer << " row " << rows[r];
        if (layer == 0) {
          EXPECT_EQ(p[rows[r]], 0.0f) << "layer 0 row " << rows[r];
          EXPECT_LT(sum, 1.0 - 1e-4) << "the sink holds some weight, row " << rows[r];
          if (rows[r] == 0) {
            EXPECT_EQ(sum, 0.0);
          }
        } else {
          EXPECT_GT(p[rows[r]], 0.0f);
          EXPECT_NEAR(sum, 1.0, 1e-4) << "layer 1 row " << rows[r];
        }
      }
    }
  }
}

// Partial rotary (config.rotary_dims) is the same forward with the tail dims unrotated.
class NumpyForward : public ::testing::TestWithParam<int> {};

void ExpectMatchesNumpy(ModelConfig c) {
  const std::string py = FLASHTICK_PYTHON;
  if (std::system((py + " -c 'import numpy, safetensors' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "no numpy/safetensors in " << py;
  auto be = Cpu(2);
  ModelOptions f64;
  f64.compute_dtype = DType::kF64;
  const std::string dir = TempDir("np");
  c.rope_theta = 300.0f;  // so every rotated pair turns visibly over the 45 steps
  auto m = Make(be.get(), 31, f64, c);
  ASSERT_TRUE(m->Save(dir).ok());
  const int64_t B = 2, T = 45, F = 6;
  const auto ticks = Ticks(B, T, F, 8);
  PREDICT_OR_SKIP(ours, m->Predict(ticks, B, T, false));
  { std::ofstream(dir + "/ticks.f32", std::ios::binary).write(reinterpret_cast<const char*>(ticks.data()), ticks.size() * 4); }
  const std::string cmd = py + " " + FLASHTICK_SOURCE_DIR + "/tests/model/numpy_forward.py " + dir +
                          " " + std::to_string(B) + " " + std::to_string(T);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir + "/probs.f64", std::ios::binary);
  std::vector<double> ref(B * T * 3);
  in.read(reinterpret_cast<char*>(ref.data()), ref.size() * 8);
  ASSERT_TRUE(in.good());
  double max_err = 0;
  for (size_t i = 0; i < ref.size(); ++i) max_err = std::max(max_err, std::fabs(ref[i] - ours[i]));
  // Our f64 probabilities are returned as fp32: the rounding to fp32 dominates.
  EXPECT_LT(max_err, 1e-7);
}

TEST_P(NumpyForward, MatchesFloat64) {
  ModelConfig c = SmallConfig();
  c.rotary_dims = GetParam();
  ExpectMatchesNumpy(c);
}

// Position-free layers (config.nope_interval): layer 1 of 2 attends unrotated.
TEST(NumpyForwardNope, MatchesFloat64) {
  ModelConfig c = SmallConfig();
  c.nope_interval = 2;
  ExpectMatchesNumpy(c);
}

// Attention that excludes the step itself (config.exclude_self_layers): layer 0 of 2
// attends to earlier steps and a zero sink; the NumPy forward shifts k and v itself.
TEST(NumpyForwardExcludeSelf, MatchesFloat64) {
  ModelConfig c = SmallConfig();
  c.exclude_self_layers = 1;
  ExpectMatchesNumpy(c);
  c.exclude_self_layers = c.layers;
  ExpectMatchesNumpy(c);
}

// Fourier input features (model/input_encoding.h) on the spread column: the NumPy
// forward encodes the raw ticks itself.
TEST(NumpyForwardFourier, MatchesFloat64) {
  ModelConfig c = SmallConfig();
  c.fourier_feature = 1;
  c.fourier_periods = {0.5f, 2.0f, 16.0f};
  ExpectMatchesNumpy(c);
}

INSTANTIATE_TEST_SUITE_P(RotaryDims, NumpyForward, ::testing::Values(-1, 0, 4),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param < 0 ? std::string("all") : absl::StrCat("r", i.param);
                         });

}  // namespace
}  // namespace flashtick
