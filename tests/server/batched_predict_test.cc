// PredictBatched (docs/serving.md): requests of different lengths, batch sizes
// and last_only run as ONE right-padded forward give the same probabilities as
// each request run alone (CPU fp32: bit-equal in practice, bound 1e-6), and
// LengthBucket keeps a bucket's longest length under 2^(1/4) × its shortest.
#include "server/inference/batched_predict.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "common/random_ticks.h"
#include "kernels/backend.h"
#include "kernels/host_staging_pool.h"
#include "model/transformer.h"

namespace flashtick {
namespace {

constexpr float kTol = 1e-6f;  // same ops, same rows: only summation order could differ

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  return worst;
}

class BatchedPredictTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = CreateBackend("cpu");
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(backend).value();
    ModelConfig config;
    config.width = 32;
    config.heads = 4;
    config.kv_heads = 2;
    config.max_context = 512;
    auto model = Transformer::InitRandom(config, 5, backend_.get());
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = std::move(model).value();
  }

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Transformer> model_;
};

TEST_F(BatchedPredictTest, PaddedBatchEqualsEachRequestAlone) {
  const int64_t F = model_->config().features;
  struct Shape {
    int64_t batch, steps;
    bool last_only;
  };
  // Different lengths (the longest, 97, pads the others by up to 37 rows), a
  // request with two sequences, and last_only on some but not all.
  const std::vector<Shape> shapes = {{1, 60, false}, {2, 97, false}, {1, 81, true}, {1, 97, true}};
  std::vector<std::vector<float>> ticks;
  std::vector<BatchedRequest> requests;
  for (size_t i = 0; i < shapes.size(); ++i) {
    ticks.push_back(RandomTicks(shapes[i].batch * shapes[i].steps * F, 100 + i));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    requests.push_back({ticks[i], shapes[i].batch, shapes[i].steps, shapes[i].last_only});
  }
  auto batched = PredictBatched(model_.get(), requests);
  ASSERT_TRUE(batched.ok()) << batched.status();
  ASSERT_EQ(batched->size(), shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto alone = model_->Predict(ticks[i], shapes[i].batch, shapes[i].steps, shapes[i].last_only);
    ASSERT_TRUE(alone.ok()) << alone.status();
    EXPECT_LE(MaxAbsDiff((*batched)[i], *alone), kTol) << "request " << i;
  }
}

TEST_F(BatchedPredictTest, EqualLengthLastOnlyBatchRunsTheHeadOnLastRows) {
  const int64_t F = model_->config().features;
  std::vector<std::vector<float>> ticks = {RandomTicks(50 * F, 1), RandomTicks(50 * F, 2),
                                           RandomTicks(50 * F, 3)};
  std::vector<BatchedRequest> requests;
  for (const auto& t : ticks) requests.push_back({t, 1, 50, true});
  auto batched = PredictBatched(model_.get(), requests);
  ASSERT_TRUE(batched.ok()) << batched.status();
  for (size_t i = 0; i < ticks.size(); ++i) {
    auto full = model_->Predict(ticks[i], 1, 50, false);
    ASSERT_TRUE(full.ok());
    const int64_t classes = model_->config().classes;
    std::vector<float> last(full->end() - classes, full->end());
    ASSERT_EQ((*batched)[i].size(), static_cast<size_t>(classes));
    EXPECT_LE(MaxAbsDiff((*batched)[i], last), kTol);
  }
}

TEST_F(BatchedPredictTest, PaddedLastOnlyRequestsAnswerFromTheirLastRealStep) {
  // --pad-length-to 64: length 50 runs as a window of 64 whose last 14 rows are
  // zeros. Last-step requests of one length take the last-step forward at row 49
  // (its keys stop there), alone or batched, and match the unpadded forward.
  const int64_t F = model_->config().features, classes = model_->config().classes;
  std::vector<std::vector<float>> ticks = {RandomTicks(50 * F, 11), RandomTicks(50 * F, 12),
                                           RandomTicks(2 * 50 * F, 13)};
  std::vector<BatchedRequest> requests = {{ticks[0], 1, 50, true}, {ticks[1], 1, 50, true},
                                          {ticks[2], 2, 50, true}};
  for (const size_t n : {size_t{1}, requests.size()}) {  // one request, then all three
    auto padded = PredictBatched(model_.get(), absl::MakeConstSpan(requests).first(n), {},
                                 kChunkTokens, /*pad_length_to=*/64);
    ASSERT_TRUE(padded.ok()) << padded.status();
    for (size_t i = 0; i < n; ++i) {
      auto alone = model_->Predict(ticks[i], requests[i].batch, 50, true);
      ASSERT_TRUE(alone.ok()) << alone.status();
      ASSERT_EQ((*padded)[i].size(), static_cast<size_t>(requests[i].batch * classes));
      EXPECT_LE(MaxAbsDiff((*padded)[i], *alone), kTol) << n << " requests, request " << i;
    }
  }
}

TEST_F(BatchedPredictTest, ShapeMismatchIsInternalNotACrash) {
  std::vector<float> ticks(10, 0.0f);
  std::vector<BatchedRequest> requests = {{ticks, 1, 50, false}};
  EXPECT_EQ(PredictBatched(model_.get(), requests).status().code(), absl::StatusCode::kInternal);
}

TEST(LengthBucket, QuarterOctaves) {
  EXPECT_EQ(LengthBucket(1), 0);
  EXPECT_EQ(LengthBucket(2), 4);
  EXPECT_EQ(LengthBucket(1024), 40);
  EXPECT_EQ(LengthBucket(1023), 39);
  EXPECT_EQ(LengthBucket(23400), LengthBucket(23200));  // 2^14.5 ≈ 23,170 starts the bucket
  // Within one bucket the padding stays under 2^(1/4): check every n up to 30,000.
  int64_t first = 1;
  for (int64_t n = 2; n <= 30000; ++n) {
    if (LengthBucket(n) != LengthBucket(first)) {
      first = n;
      continue;
    }
    ASSERT_LT(static_cast<double>(n) / first, std::pow(2.0, 0.25)) << n << " vs " << first;
  }
}

TEST_F(BatchedPredictTest, ChunkedForwardEqualsOneForward) {
  // Rows are forwarded in chunks of chunk_tokens / T rows; rows are independent,
  // so the answer must not change.
  const int64_t F = model_->config().features;
  const std::vector<float> ticks = RandomTicks(5 * 40 * F, 7);
  const std::vector<BatchedRequest> one = {{ticks, 5, 40, false}};
  auto whole = PredictBatched(model_.get(), one);
  auto chunked = PredictBatched(model_.get(), one, {}, /*chunk_tokens=*/80);  // 2 rows a chunk
  ASSERT_TRUE(whole.ok() && chunked.ok());
  EXPECT_LE(MaxAbsDiff((*whole)[0], (*chunked)[0]), kTol);
}

TEST(PaddedLength, RoundsUpToTheMultipleAndNeverPastMaxContext) {
  EXPECT_EQ(PaddedLength(23400, 1, 32768), 23400);     // off
  EXPECT_EQ(PaddedLength(23400, 1024, 32768), 23552);  // 23 × 1024 = 23,552
  EXPECT_EQ(PaddedLength(2048, 1024, 32768), 2048);    // already a multiple
  EXPECT_EQ(PaddedLength(1, 256, 32768), 256);
  EXPECT_EQ(PaddedLength(32700, 1024, 32768), 32768);
  EXPECT_EQ(PaddedLength(500, 1024, 512), 512);        // capped at max_context
  EXPECT_EQ(PaddedLength(512, 1024, 512), 512);
}

// The server's --pad-length-to: the forward runs at a padded length, and every answer
// (all steps, last step only, one request or a batch, lengths equal or not) is the
// same as the request run alone at its own length.
TEST_F(BatchedPredictTest, PaddedLengthChangesNoAnswer) {
  const int64_t F = model_->config().features, classes = model_->config().classes;
  struct Shape {
    int64_t batch, steps;
    bool last_only;
  };
  const std::vector<std::vector<Shape>> batches = {
      {{1, 100, false}},                                   // one request, padded to 128
      {{2, 100, true}},                                    // one last-step request, padded
      {{1, 60, true}, {1, 60, true}},                      // equal lengths, last step only
      {{1, 60, false}, {2, 97, false}, {1, 81, true}},     // mixed, padded to 128
      {{1, 500, true}, {1, 490, false}},                   // capped at max_context 512
  };
  for (size_t k = 0; k < batches.size(); ++k) {
    SCOPED_TRACE(k);
    std::vector<std::vector<float>> ticks;
    for (size_t i = 0; i < batches[k].size(); ++i)
      ticks.push_back(RandomTicks(batches[k][i].batch * batches[k][i].steps * F, 200 + 10 * k + i));
    std::vector<BatchedRequest> requests;
    for (size_t i = 0; i < batches[k].size(); ++i)
      requests.push_back({ticks[i], batches[k][i].batch, batches[k][i].steps, batches[k][i].last_only});
    auto padded = PredictBatched(model_.get(), requests, {}, kChunkTokens, /*pad_length_to=*/64);
    ASSERT_TRUE(padded.ok()) << padded.status();
    for (size_t i = 0; i < requests.size(); ++i) {
      const Shape& sh = batches[k][i];
      auto alone = model_->Predict(ticks[i], sh.batch, sh.steps, sh.last_only);
      ASSERT_TRUE(alone.ok()) << alone.status();
      ASSERT_EQ((*padded)[i].size(),
                static_cast<size_t>(sh.batch * (sh.last_only ? 1 : sh.steps) * classes));
      EXPECT_LE(MaxAbsDiff((*padded)[i], *alone), kTol) << "request " << i;
    }
  }
}

TEST_F(BatchedPredictTest, IntoWritesEachAnswerIntoTheCallersBuffer) {
  // The server passes the responses' own buffers: a merged batch (sliced into
  // them) and a chunked single request (each chunk downloaded in place) must
  // fill them exactly as PredictBatched answers.
  const int64_t F = model_->config().features;
  const int64_t K = model_->config().classes;
  const std::vector<float> a = RandomTicks(2 * 40 * F, 11), b = RandomTicks(1 * 35 * F, 12);
  const std::vector<BatchedRequest> merged = {{a, 2, 40, false}, {b, 1, 35, true}};
  auto expected = PredictBatched(model_.get(), merged);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::vector<float> out_a(2 * 40 * K, -1.0f), out_b(1 * 1 * K, -1.0f);
  const std::vector<absl::Span<float>> outs = {absl::MakeSpan(out_a), absl::MakeSpan(out_b)};
  ASSERT_TRUE(PredictBatchedInto(model_.get(), merged, outs).ok());
  EXPECT_EQ(out_a, (*expected)[0]);
  EXPECT_EQ(out_b, (*expected)[1]);

  const std::vector<BatchedRequest> single = {{a, 2, 40, false}};
  std::vector<float> out_single(2 * 40 * K, -1.0f);
  const std::vector<absl::Span<float>> one_out = {absl::MakeSpan(out_single)};
  ASSERT_TRUE(PredictBatchedInto(model_.get(), single, one_out, {}, /*chunk_tokens=*/40).ok());
  EXPECT_LE(MaxAbsDiff(out_single, (*expected)[0]), kTol);

  // A buffer of the wrong size is a bug, reported before any forward.
  std::vector<float> small(K, -1.0f);
  const std::vector<absl::Span<float>> bad = {absl::MakeSpan(small)};
  EXPECT_EQ(PredictBatchedInto(model_.get(), single, bad).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(small, std::vector<float>(K, -1.0f));
}

TEST_F(BatchedPredictTest, AStagedBatchAnswersAsTheUnstagedOne) {
  // --max-pinned-staging-mb: a merged batch is stacked into (and its probabilities come
  // back through) a reused staging buffer. The buffer holds the last batch's bytes, so
  // the padding must be written, not assumed zero: it is filled with NaN first. A pool
  // too small for the batch falls back to ordinary memory. Both answer bit for bit as
  // the batch without staging.
  const int64_t F = model_->config().features;
  const int64_t K = model_->config().classes;
  const std::vector<float> a = RandomTicks(2 * 40 * F, 21), b = RandomTicks(1 * 27 * F, 22);
  const std::vector<BatchedRequest> merged = {{a, 2, 40, false}, {b, 1, 27, false}};
  auto expected = PredictBatched(model_.get(), merged);
  ASSERT_TRUE(expected.ok()) << expected.status();
  HostStagingPool pool(backend_.get(), 16 << 20);
  HostStagingPool tiny(backend_.get(), 1024);
  {
    auto dirty = pool.Acquire(64 << 10);  // the buffer the batch will be stacked in
    ASSERT_TRUE(dirty.ok());
    std::memset(dirty->data(), 0xff, dirty->capacity());  // all NaN
  }
  for (HostStagingPool* staging : {&pool, &tiny}) {
    std::vector<float> out_a(2 * 40 * K, -1.0f), out_b(1 * 27 * K, -1.0f);
    const std::vector<absl::Span<float>> outs = {absl::MakeSpan(out_a), absl::MakeSpan(out_b)};
    ASSERT_TRUE(
        PredictBatchedInto(model_.get(), merged, outs, {}, kChunkTokens, 1, staging).ok());
    EXPECT_EQ(out_a, (*expected)[0]) << (staging == &pool ? "staged" : "fallback");
    EXPECT_EQ(out_b, (*expected)[1]) << (staging == &pool ? "staged" : "fallback");
  }
  EXPECT_EQ(pool.free_buffers(), 2u);  // the ticks' buffer and the probabilities' came back
  EXPECT_EQ(tiny.held_bytes(), 0u);
}

TEST_F(BatchedPredictTest, AnAbandonedForwardStopsBetweenChunks) {
  // A forward whose clients are all gone stops at the next chunk instead of
  // holding the worker to the end.
  const int64_t F = model_->config().features;
  const std::vector<float> ticks = RandomTicks(6 * 40 * F, 8);
  const std::vector<BatchedRequest> one = {{ticks, 6, 40, false}};
  // Each chunk's forward asks between its layers too: let those pass, and say
  // "gone" at the first question between chunks.
  const int per_chunk = model_->config().layers - 1;
  int asked = 0;
  auto result = PredictBatched(
      model_.get(), one, [&] { return ++asked > per_chunk; }, /*chunk_tokens=*/80);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
  EXPECT_NE(std::string(result.status().message()).find("after 2 of 6 rows"), std::string::npos)
      << result.status();
  EXPECT_EQ(asked, per_chunk + 1);
}

TEST_F(BatchedPredictTest, ASingleLongRowStopsBetweenLayers) {
  // One row longer than a chunk cannot be split into rows; its forward asks
  // between layers instead, and stops at the first layer after its clients left.
  ModelConfig config = model_->config();
  config.layers = 4;
  auto deep = Transformer::InitRandom(config, 6, backend_.get());
  ASSERT_TRUE(deep.ok()) << deep.status();
  const int64_t F = config.features, T = 300;
  const std::vector<float> ticks = RandomTicks(T * F, 9);
  const std::vector<BatchedRequest> one = {{ticks, 1, T, false}};
  int asked = 0;
  auto stopped = PredictBatched(
      deep->get(), one, [&] { return ++asked >= 2; }, /*chunk_tokens=*/80);  // T > a chunk
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kCancelled) << stopped.status();
  EXPECT_NE(std::string(stopped.status().message()).find("before layer 3 of 4"),
            std::string::npos)
      << stopped.status();
  EXPECT_EQ(asked, 2);
  // Asked and never told to stop, the forward gives the same answer as without.
  int calls = 0;
  auto asked_all = PredictBatched(deep->get(), one, [&] { return ++calls < 0; }, 80);
  auto plain = (*deep)->Predict(ticks, 1, T, false);
  ASSERT_TRUE(asked_all.ok() && plain.ok());
  EXPECT_EQ(calls, 3);
  EXPECT_LE(MaxAbsDiff((*asked_all)[0], *plain), kTol);
}

}  // namespace
}  // namespace flashtick
