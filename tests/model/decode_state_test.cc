// Incremental decoding (model/decode_state.h, Transformer::Step) on the CPU backend:
// stepping T = 300 random rows one at a time gives, at every step t, the
// probabilities of row t of Predict over the whole [1, T, F] sequence (last_only =
// false), for grouped-query (Hkv < H) and multi-head configs, across cache growth
// (initial capacity 8 → 16 → … → 512). Plus: stepping past max_context is
// RESOURCE_EXHAUSTED, a NaN/Inf or wrong-width row is INVALID_ARGUMENT, and neither
// changes the state (the next good row still matches Predict), and the f64 mode.
// Captured steps (DecodeOptions::capture) replayed per capacity match the same way.
// With a GPU: the same comparisons on CUDA in bf16 (D = 64), skipped without one. And the
// last-step forward of a right-padded window against the unpadded one (its decode reads
// a prefix of the padded keys), on the CPU and on CUDA.
// The GQA/MHA models have their q/k projections scaled ×kSharpen after the GPT-2
// init: at N(0, 0.02) attention is nearly uniform, so a wrong position or cache row
// would move probabilities by only ~1e-5; sharpened, it moves them by far more.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include <unistd.h>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "model/decode_state.h"
#include "model/safetensors.h"
#include "model/transformer.h"

namespace flashtick {
namespace {

// fp32: |Δp| ≤ 1e-5 + 1e-5·p per probability. Step and Predict run the same ops on
// the same fp32 weights and differ only in summation order (one-row vs blocked
// matmul, decode's chunked vs the forward's tiled online softmax); the CPU reference
// accumulates in fp64, so today they agree bit for bit (the test prints the max).
constexpr double kAbsTol = 1e-5, kRelTol = 1e-5;

ModelConfig Config(int heads, int kv_heads, int max_context) {
  ModelConfig c;
  c.width = 32;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.layers = 2;
  c.max_context = max_context;
  return c;
}

constexpr float kSharpen = 12.0f;

// A random model whose q and k projection rows (the first (H + Hkv)·D rows of each
// fused QKV weight) are scaled by kSharpen, through Save → edit → Load.
std::unique_ptr<Transformer> SharpModel(const ModelConfig& c, uint64_t seed, Backend* be) {
  auto m = Transformer::InitRandom(c, seed, be);
  EXPECT_TRUE(m.ok()) << m.status();
  const std::string dir = ::testing::TempDir() + "/decode_state_test_" +
                          std::to_string(::getpid()) + "_" + std::to_string(seed);
  EXPECT_TRUE((*m)->Save(dir).ok());
  const std::string path = dir + "/model.safetensors";
  auto st = Safetensors::ReadFile(path);
  EXPECT_TRUE(st.ok()) << st.status();
  const int64_t qk_rows = int64_t{c.heads + c.kv_heads} * c.head_dim();
  const int64_t W = int64_t{c.heads + 2 * c.kv_heads} * c.head_dim();
  for (int l = 0; l < c.layers; ++l) {
    const std::string name = "blocks." + std::to_string(l) + ".attn.qkv.weight";
    auto w = st->ToFloat32(name, {W, c.width});
    EXPECT_TRUE(w.ok()) << w.status();
    for (int64_t i = 0; i < qk_rows * c.width; ++i) (*w)[i] *= kSharpen;
    EXPECT_TRUE(st->Add(name, DType::kF32, {W, c.width}, w->data()).ok());
  }
  EXPECT_TRUE(st->WriteFile(path).ok());
  auto loaded = Transformer::Load(dir, be);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  std::filesystem::remove_all(dir);
  return std::move(loaded).value();
}

std::vector<float> Rows(int64_t T, int64_t F, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(T * F);
  for (auto& x : v) x = d(rng);
  return v;
}

std::unique_ptr<Backend> Cpu() {
  BackendOptions o;
  o.threads = 2;
  return std::move(CreateBackend("cpu", o)).value();
}

// Steps every row of `ticks` ([T, F]) through a fresh state and compares each
// step's probabilities with row t of Predict(last_only = false).
// With options.capture, every step after each capacity's first replays a capture
// (Backend::BeginCapture), and the state must really be capturing: a step whose ops
// took the position from their arguments would replay the captured step's position.
void ExpectStepsMatchPredict(Transformer* m, const std::vector<float>& ticks, int64_t T,
                             int64_t initial_capacity, double abs_tol, double rel_tol,
                             const DecodeOptions& options = {}) {
  const int64_t F = m->config().features, K = m->config().classes;
  auto full = m->Predict(ticks, 1, T, /*last_only=*/false);
  ASSERT_TRUE(full.ok()) << full.status();
  auto state = DecodeState::Create(*m, initial_capacity, options);
  ASSERT_TRUE(state.ok()) << state.status();
  int capacities = 1;
  for (int64_t c = std::min<int64_t>(initial_capacity, m->config().max_context); c < T; c *= 2)
    ++capacities;
  double worst = 0.0;
  for (int64_t t = 0; t < T; ++t) {
    auto p = m->Step(state->get(), absl::MakeConstSpan(ticks.data() + t * F, F));
    ASSERT_TRUE(p.ok()) << "step " << t << ": " << p.status();
    ASSERT_EQ(static_cast<int64_t>(p->size()), K);
    ASSERT_EQ((*state)->steps(), t + 1);
    for (int64_t k = 0; k < K; ++k) {
      const double want = (*full)[t * K + k], got = (*p)[k];
      worst = std::max(worst, std::abs(got - want));
      ASSERT_NEAR(got, want, abs_tol + rel_tol * std::abs(want)) << "step " << t << " class " << k;
    }
  }
  EXPECT_GE((*state)->capacity(), T);  // grew from initial_capacity
  if (options.capture) {
    EXPECT_TRUE((*state)->capturing()) << (*state)->capture_error();
    EXPECT_EQ((*state)->captures(), capacities);  // once per capacity, replayed after
  }
  std::printf("T=%lld H=%d Hkv=%d %s%s: max |step - predict| = %.3g over %lld steps\n",
              static_cast<long long>(T), m->config().heads, m->config().kv_heads,
              DTypeName(m->compute_dtype()), options.capture ? " (captured)" : "", worst,
              static_cast<long long>(T));
}

TEST(DecodeStateTest, GroupedQueryStepsMatchPredict) {
  auto be = Cpu();
  auto m = SharpModel(Config(4, 2, 4096), 11, be.get());
  ASSERT_TRUE(m->SupportsDecode());
  const int64_t T = 300;
  ExpectStepsMatchPredict(m.get(), Rows(T, m->config().features, 5), T, 8, kAbsTol, kRelTol);
}

// The same steps replayed from a capture per capacity (DecodeOptions::capture; the CPU
// backend records closures, CUDA makes graphs), through growth 8 → … → 512.
TEST(DecodeStateTest, CapturedGroupedQueryStepsMatchPredict) {
  auto be = Cpu();
  auto m = SharpModel(Config(4, 2, 4096), 11, be.get());
  const int64_t T = 300;
  DecodeOptions capture;
  capture.capture = true;
  ExpectStepsMatchPredict(m.get(), Rows(T, m->config().features, 5), T, 8, kAbsTol, kRelTol,
                          capture);
}

// Partial rotary and a position-free layer, captured: each layer's rope reads the
// position from memory with its own rotary dims.
TEST(DecodeStateTest, CapturedPositionFreeLayerStepsMatchPredict) {
  auto be = Cpu();
  ModelConfig c = Config(4, 2, 4096);
  c.nope_interval = 2;
  c.rope_theta = 300.0f;
  auto m = SharpModel(c, 14, be.get());
  const int64_t T = 120;
  DecodeOptions capture;
  capture.capture = true;
  ExpectStepsMatchPredict(m.get(), Rows(T, m->config().features, 10), T, 8, kAbsTol, kRelTol,
                          capture);
}

TEST(DecodeStateTest, MultiHeadStepsMatchPredict) {
  auto be = Cpu();
  auto m = SharpModel(Config(4, 4, 4096), 12, be.get());
  const int64_t T = 300;
  ExpectStepsMatchPredict(m.get(), Rows(T, m->config().features, 6), T,
                          DecodeState::kDefaultInitialCapacity, kAbsTol, kRelTol);
}

// With Fourier input features (model/input_encoding.h) each step encodes its own row
// the way the full forward encodes the sequence.
TEST(DecodeStateTest, FourierInputStepsMatchPredict) {
  auto be = Cpu();
  ModelConfig c = Config(4, 2, 4096);
  c.fourier_feature = 1;
  c.fourier_periods = {1.0f, 4.0f, 32.0f};
  auto m = SharpModel(c, 13, be.get());
  const int64_t T = 120;
  ExpectStepsMatchPredict(m.get(), Rows(T, m->config().features, 9), T, 8, kAbsTol, kRelTol);
}

// With position-free layers (ModelConfig::nope_interval) the step's keys go into the
// cache unrotated on those layers, as the full forward leaves them.
TEST(DecodeStateTest, PositionFreeLayerStepsMatchPredict) {
  auto be = Cpu();
  ModelConfig c = Config(4, 2, 4096);
  c.nope_interval = 2;  // layer 1 of 2 unrotated
  c.rope_theta = 300.0f;
  auto m = SharpModel(c, 14, be.get());
  const int64_t T = 120;
  ExpectStepsMatchPredict(m.get(), Rows(T, m->config().features, 10), T, 8, kAbsTol, kRelTol);
}

// A layer that excludes the step itself keeps its cache one row later, after a zero
// sink row: the steps still equal the full forward, through the cache's growth (initial
// capacity 8), and with the step captured and replayed.
TEST(DecodeStateTest, ExcludeSelfLayerStepsMatchPredict) {
  auto be = Cpu();
  ModelConfig c = Config(4, 2, 4096);
  c.exclude_self_layers = 1;
  auto m = SharpModel(c, 15, be.get());
  const int64_t T = 120;
  ExpectStepsMatchPredict(m.get(), Rows(T, m->config().features, 11), T, 8, kAbsTol, kRelTol);
  DecodeOptions capture;
  capture.capture = true;
  ExpectStepsMatchPredict(m.get(), Rows(T, m->config().features, 12), T, 8, kAbsTol, kRelTol,
                          capture);
}

// With a layer excluding the step itself a session may still run max_context steps:
// the sink row is one row more than max_context, not one step fewer.
TEST(DecodeStateTest, ExcludeSelfRunsToMaxContext) {
  auto be = Cpu();
  ModelConfig c = Config(4, 1, 16);
  c.exclude_self_layers = 1;
  auto m = SharpModel(c, 16, be.get());
  ExpectStepsMatchPredict(m.get(), Rows(16, m->config().features, 13), 16, 4, kAbsTol, kRelTol);
  auto state = DecodeState::Create(*m, 4);
  ASSERT_TRUE(state.ok()) << state.status();
  const std::vector<float> row(static_cast<size_t>(c.features), 0.5f);
  for (int64_t t = 0; t < 16; ++t) ASSERT_TRUE(m->Step(state->get(), row).ok()) << t;
  const auto past = m->Step(state->get(), row);
  EXPECT_EQ(past.status().code(), absl::StatusCode::kResourceExhausted) << past.status();
  EXPECT_NE(past.status().message().find("17 steps exceed the model's max_context of 16"),
            std::string::npos)
      << past.status();
}

TEST(DecodeStateTest, Float64StepsMatchPredict) {
  auto be = Cpu();
  ModelOptions opt;
  opt.compute_dtype = DType::kF64;
  auto m = Transformer::InitRandom(Config(4, 1, 4096), 13, be.get(), opt);
  ASSERT_TRUE(m.ok()) << m.status();
  const int64_t T = 64;
  // f64 compute, probabilities cast to fp32 at the end: agreement to fp32 rounding.
  ExpectStepsMatchPredict(m->get(), Rows(T, (*m)->config().features, 7), T, 4, 1e-7, 1e-6);
}

TEST(DecodeStateTest, CudaBf16StepsMatchPredict) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA device in this build or machine";
  auto be = CreateBackend("cuda");
  ASSERT_TRUE(be.ok()) << be.status();
  ModelConfig c = Config(2, 1, 4096);
  c.width = 128;  // D = 64: the CUDA attention kernels' head dim
  auto m = SharpModel(c, 18, be->get());
  if (!m->SupportsDecode()) GTEST_SKIP() << "this CUDA backend has no bf16 attention_decode";
  const int64_t T = 300;
  // bf16 activations: Step (decode kernel, one-row GEMMs) and Predict (flash forward)
  // round differently; each bf16 rounding is ≤ 2^-9 relative, and the probabilities
  // after 2 layers move by ~1e-3. 2e-2 catches gross errors (wrong cache rows, head
  // mapping, unwritten cache); an off-by-one rotary position moves these
  // probabilities by only ~1e-4..1e-3, which the exact CPU cases above catch.
  ExpectStepsMatchPredict(m.get(), Rows(T, c.features, 10), T, 16, 2e-2, 0.0);
}

// The same on CUDA with the step captured as a CUDA graph per capacity and replayed.
TEST(DecodeStateTest, CudaBf16CapturedStepsMatchPredict) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA device in this build or machine";
  auto be = CreateBackend("cuda");
  ASSERT_TRUE(be.ok()) << be.status();
  ModelConfig c = Config(2, 1, 4096);
  c.width = 128;
  auto m = SharpModel(c, 18, be->get());
  if (!m->SupportsDecode()) GTEST_SKIP() << "this CUDA backend has no bf16 attention_decode";
  const int64_t T = 300;
  DecodeOptions capture;
  capture.capture = true;
  ExpectStepsMatchPredict(m.get(), Rows(T, c.features, 10), T, 16, 2e-2, 0.0, capture);
}

// A last-step forward over a right-padded window (Transformer::PredictInto's
// valid_steps: what a server padding lengths runs): its last layer's decode reads a
// prefix of each sequence's keys through the batch stride of the padded window. It
// must answer as the unpadded last-step forward does, and not as the padded window's own
// last row (which the sharpened attention makes differ by far more than `tol`).
void ExpectPaddedLastStepMatchesUnpadded(Transformer* m, double tol) {
  const ModelConfig& c = m->config();
  const int64_t B = 3, T = 300, padded_T = 384, F = c.features, K = c.classes;
  const std::vector<float> rows = Rows(B * T, F, 12);
  std::vector<float> padded(static_cast<size_t>(B * padded_T * F), 0.0f);
  for (int64_t b = 0; b < B; ++b) {
    std::copy(rows.begin() + b * T * F, rows.begin() + (b + 1) * T * F, padded.begin() + b * padded_T * F);
  }
  auto want = m->Predict(rows, B, T, /*last_only=*/true);
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<float> got(static_cast<size_t>(B * K));
  ASSERT_TRUE(m->PredictInto(padded, B, padded_T, true, {}, absl::MakeSpan(got), T).ok());
  auto window_last = m->Predict(padded, B, padded_T, true);
  ASSERT_TRUE(window_last.ok()) << window_last.status();
  double worst = 0, apart = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, double(std::abs(got[i] - (*want)[i])));
    apart = std::max(apart, double(std::abs((*window_last)[i] - (*want)[i])));
  }
  std::printf("padded last step vs unpadded: max |dp| %.3g; the window's last row differs by %.3g\n",
              worst, apart);
  EXPECT_LE(worst, tol);
  EXPECT_GT(apart, 5 * tol) << "the check cannot tell the answer row from the window's last row";
}

TEST(DecodeStateTest, PaddedLastStepForwardMatchesUnpadded) {
  auto be = CreateBackend("cpu");
  ASSERT_TRUE(be.ok()) << be.status();
  ModelConfig c = Config(2, 1, 4096);
  c.width = 128;
  auto m = SharpModel(c, 19, be->get());
  ExpectPaddedLastStepMatchesUnpadded(m.get(), 1e-5);
}

TEST(DecodeStateTest, CudaPaddedLastStepForwardMatchesUnpadded) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA device in this build or machine";
  auto be = CreateBackend("cuda");
  ASSERT_TRUE(be.ok()) << be.status();
  ModelConfig c = Config(2, 1, 4096);
  c.width = 128;  // D = 64
  auto m = SharpModel(c, 19, be->get());
  if (!m->SupportsDecode()) GTEST_SKIP() << "this CUDA backend has no bf16 attention_decode";
  ExpectPaddedLastStepMatchesUnpadded(m.get(), 2e-2);  // bf16, as the Step cases above
}

// CacheBytes is what a state's growth really allocates (caches and the decode
// workspace), so the tick stream's admission, which reserves it, does not undercount.
TEST(DecodeStateTest, GrowthAllocatesExactlyCacheBytes) {
  auto be = Cpu();
  auto m = Transformer::InitRandom(Config(4, 2, 4096), 15, be.get());
  ASSERT_TRUE(m.ok()) << m.status();
  // Two states, of 64 and 1,024 rows: their fixed scratch is the same, so the
  // difference of what each allocated is the difference of their caches and workspaces.
  const int64_t base = be->Memory().used_bytes;
  auto small = DecodeState::Create(**m, 64);
  ASSERT_TRUE(small.ok()) << small.status();
  const int64_t small_bytes = be->Memory().used_bytes - base;
  auto large = DecodeState::Create(**m, 1024);
  ASSERT_TRUE(large.ok()) << large.status();
  const int64_t large_bytes = be->Memory().used_bytes - base - small_bytes;
  ASSERT_EQ((*small)->capacity(), 64);
  ASSERT_EQ((*large)->capacity(), 1024);
  EXPECT_EQ(large_bytes - small_bytes,
            DecodeState::CacheBytes(**m, 1024) - DecodeState::CacheBytes(**m, 64));
}

// CapacityFor is the capacity stepping really reaches (admission reserves CacheBytes at
// it): doubling from the initial capacity, capped at max_context.
TEST(DecodeStateTest, CapacityForIsTheCapacityStepsReach) {
  auto be = Cpu();
  auto m = Transformer::InitRandom(Config(4, 2, 1000), 16, be.get());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(DecodeState::CapacityFor(**m, 1), 256);
  EXPECT_EQ(DecodeState::CapacityFor(**m, 256), 256);
  EXPECT_EQ(DecodeState::CapacityFor(**m, 257), 512);
  EXPECT_EQ(DecodeState::CapacityFor(**m, 600), 1000);  // 1,024 capped at max_context
  EXPECT_EQ(DecodeState::CapacityFor(**m, 5, 3), 6);
  const int64_t F = (*m)->config().features;
  for (const int64_t rows : {1, 7, 8, 9, 100}) {
    auto state = DecodeState::Create(**m, 8);
    ASSERT_TRUE(state.ok()) << state.status();
    const std::vector<float> ticks = Rows(rows, F, 3);
    for (int64_t t = 0; t < rows; ++t)
      ASSERT_TRUE((*m)->Step(state->get(), absl::MakeConstSpan(ticks.data() + t * F, F)).ok());
    EXPECT_EQ((*state)->capacity(), DecodeState::CapacityFor(**m, rows, 8)) << rows << " rows";
  }
}

TEST(DecodeStateTest, PastMaxContextIsResourceExhaustedAndKeepsState) {
  auto be = Cpu();
  const int max_context = 20;
  auto m = Transformer::InitRandom(Config(4, 2, max_context), 14, be.get());
  ASSERT_TRUE(m.ok()) << m.status();
  const int64_t F = (*m)->config().features;
  const std::vector<float> rows = Rows(max_context + 1, F, 8);
  auto state = DecodeState::Create(**m, 3);  // grows 3 → 6 → 12 → 20 (clamped)
  ASSERT_TRUE(state.ok()) << state.status();
  std::vector<float> last;
  for (int64_t t = 0; t < max_context; ++t) {
    auto p = (*m)->Step(state->get(), absl::MakeConstSpan(rows.data() + t * F, F));
    ASSERT_TRUE(p.ok()) << "step " << t << ": " << p.status();
    last = *p;
  }
  EXPECT_EQ((*state)->capacity(), max_context);
  auto over = (*m)->Step(state->get(), absl::MakeConstSpan(rows.data() + max_context * F, F));
  ASSERT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted) << over.status();
  EXPECT_NE(over.status().message().find("max_context of 20"), std::string::npos)
      << over.status();
  EXPECT_EQ((*state)->steps(), max_context);
  // The cache still holds the whole sequence: its last step equals Predict's.
  auto full = (*m)->Predict(absl::MakeConstSpan(rows.data(), max_context * F), 1, max_context, true);
  ASSERT_TRUE(full.ok()) << full.status();
  for (size_t k = 0; k < last.size(); ++k) EXPECT_NEAR(last[k], (*full)[k], kAbsTol);
}

TEST(DecodeStateTest, BadRowIsInvalidArgumentAndLeavesStateUnchanged) {
  auto be = Cpu();
  auto m = Transformer::InitRandom(Config(4, 2, 4096), 15, be.get());
  ASSERT_TRUE(m.ok()) << m.status();
  const int64_t F = (*m)->config().features, K = (*m)->config().classes, T = 12;
  const std::vector<float> rows = Rows(T, F, 9);
  auto full = (*m)->Predict(rows, 1, T, false);
  ASSERT_TRUE(full.ok()) << full.status();
  auto state = DecodeState::Create(**m);
  ASSERT_TRUE(state.ok()) << state.status();
  for (int64_t t = 0; t < T; ++t) {
    if (t == 5) {
      for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
        std::vector<float> row(rows.begin() + t * F, rows.begin() + (t + 1) * F);
        row[F - 1] = bad;
        auto p = (*m)->Step(state->get(), row);
        ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
        EXPECT_NE(p.status().message().find("NaN or Inf"), std::string::npos) << p.status();
        EXPECT_EQ((*state)->steps(), 5);
      }
      std::vector<float> narrow(F - 1, 0.0f);
      auto p = (*m)->Step(state->get(), narrow);
      ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
      EXPECT_EQ((*state)->steps(), 5);
    }
    // After the rejected rows, the good row t still gives Predict's row t.
    auto p = (*m)->Step(state->get(), absl::MakeConstSpan(rows.data() + t * F, F));
    ASSERT_TRUE(p.ok()) << p.status();
    for (int64_t k = 0; k < K; ++k)
      ASSERT_NEAR((*p)[k], (*full)[t * K + k], kAbsTol + kRelTol * (*full)[t * K + k])
          << "step " << t;
  }
}

TEST(DecodeStateTest, StateOfAnotherModelIsRejected) {
  auto be = Cpu();
  auto a = Transformer::InitRandom(Config(4, 2, 64), 16, be.get());
  auto b = Transformer::InitRandom(Config(4, 2, 64), 17, be.get());
  ASSERT_TRUE(a.ok() && b.ok());
  auto state = DecodeState::Create(**a);
  ASSERT_TRUE(state.ok()) << state.status();
  std::vector<float> row((*a)->config().features, 0.5f);
  auto p = (*b)->Step(state->get(), row);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
  EXPECT_EQ((*state)->steps(), 0);
}

}  // namespace
}  // namespace flashtick
