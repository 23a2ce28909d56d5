// The per-request peak memory (flashtick_request_gpu_peak_bytes) under concurrency:
// ModelInfer forwards of different lengths run from several threads at once on one
// model and backend, as --workers > 1 does, and each reports the same peak it reports
// alone — the part of the workspace its own length carves, not the longest request's,
// not the weights, not the other thread's — as the stream ticks' ForwardWindow does.
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/random_ticks.h"
#include "kernels/backend.h"
#include "kernels/memory_scope.h"
#include "model/transformer.h"
#include "server/inference/forward_window.h"
#include "server/inference/inference_core.h"
#include "server/model_repository.h"
#include "tests/server/one_model_repository.h"

namespace flashtick {
namespace {

class RequestPeakMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = CreateBackend("cpu", {.threads = 1});
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(backend).value();
    auto repo = testing_server::OneModelRepository("peak", backend_.get());
    ASSERT_TRUE(repo.ok()) << repo.status();
    repo_ = std::move(repo).value();
    core_ = std::make_unique<InferenceCore>(repo_.get(), testing_server::SmallServedConfig().max_context);
    auto found = repo_->Find("peak", "");
    ASSERT_TRUE(found.ok()) << found.status();
    model_ = *found;
  }

  InferenceCore::Prepared Request(int64_t steps, uint64_t seed) const {
    InferenceCore::Prepared p;
    p.model = model_;
    p.input.SetTicks(RandomTicks(steps * model_->features, seed));
    p.input.batch = 1;
    p.input.steps = steps;
    p.input.features = model_->features;
    return p;
  }

  // One ModelInfer forward; returns its peak (-1 on error, with a test failure).
  int64_t Peak(const InferenceCore::Prepared& request) const {
    const InferenceCore::Prepared* batch[] = {&request};
    inference::ModelInferResponse response;
    inference::ModelInferResponse* responses[] = {&response};
    InferenceCore::BatchCost cost;
    const absl::Status status = core_->RunBatch(batch, responses, &cost);
    EXPECT_TRUE(status.ok()) << status;
    return status.ok() ? cost.peak_memory_bytes : -1;
  }

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<ModelRepository> repo_;
  std::unique_ptr<InferenceCore> core_;
  ModelEntryPtr model_;
};

TEST_F(RequestPeakMemoryTest, ConcurrentRequestsOfDifferentLengthsEachReportTheirOwn) {
  const InferenceCore::Prepared short_request = Request(40, 1);
  const InferenceCore::Prepared long_request = Request(700, 2);
  // Alone, long first: the short one runs in the workspace the long one grew and
  // still reports only its own part of it.
  const int64_t long_alone = Peak(long_request);
  const int64_t short_alone = Peak(short_request);
  ASSERT_GT(short_alone, 0);
  ASSERT_GT(long_alone, 4 * short_alone);  // lengths 700 vs 40: activations scale with N
  // Nor does it include the weights, which the backend held before the request.
  EXPECT_LT(short_alone, backend_->Memory().used_bytes);

  constexpr int kRounds = 20;
  std::vector<int64_t> short_peaks(kRounds), long_peaks(kRounds);
  std::thread short_worker([&] {
    for (int i = 0; i < kRounds; ++i) short_peaks[i] = Peak(short_request);
  });
  std::thread long_worker([&] {
    for (int i = 0; i < kRounds; ++i) long_peaks[i] = Peak(long_request);
  });
  // A third thread allocating on the same backend meanwhile (what an open stream's
  // decode state does) shows up in no request's figure.
  std::thread other([&] {
    for (int i = 0; i < 200; ++i) {
      auto block = backend_->Allocate(size_t{8} << 20);
      ASSERT_TRUE(block.ok()) << block.status();
    }
  });
  short_worker.join();
  long_worker.join();
  other.join();
  for (int i = 0; i < kRounds; ++i) {
    EXPECT_EQ(short_peaks[i], short_alone) << "round " << i;
    EXPECT_EQ(long_peaks[i], long_alone) << "round " << i;
  }
}

TEST_F(RequestPeakMemoryTest, ForwardWindowCountsWhatItsThreadAllocates) {
  std::shared_ptr<void> kept;
  int64_t peak = 0;
  {
    const ForwardWindow window(*backend_);
    auto a = backend_->Allocate(3 << 20);
    auto b = backend_->Allocate(1 << 20);
    ASSERT_TRUE(a.ok() && b.ok());
    kept = *b;
    peak = window.peak_bytes();
    EXPECT_GE(window.seconds(), 0);
  }
  EXPECT_EQ(peak, 4 << 20);
  // Freed on another thread after the window closed (a stream's cache): no effect on
  // the next window.
  const ForwardWindow next(*backend_);
  std::thread([&] { kept.reset(); }).join();
  EXPECT_EQ(next.peak_bytes(), 0);
}

}  // namespace
}  // namespace flashtick
