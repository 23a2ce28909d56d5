// flashtickd --warm-up (InferenceCore::WarmUp): the lengths a padded ModelInfer forward
// can run at (every multiple of --pad-length-to up to the padded longest request,
// capped by the model's max_context and the server's --max-seq-len), and one forward
// at each of them, before the server answers. On the CPU backend this only shows that
// the forwards run (their memory peak); what they save on a GPU (cuDNN's graph per
// length, the dispatcher's timing) is measured there (docs/kernels/cudnn.md).
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/backend.h"
#include "model/transformer.h"
#include "server/inference/inference_core.h"
#include "server/model_repository.h"
#include "tests/server/one_model_repository.h"

namespace flashtick {
namespace {

class InferenceWarmUpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = CreateBackend("cpu", {.threads = 1});
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(backend).value();
    auto repo = testing_server::OneModelRepository("warm", backend_.get());  // max_context 1024
    ASSERT_TRUE(repo.ok()) << repo.status();
    repo_ = std::move(repo).value();
    auto found = repo_->Find("warm", "");
    ASSERT_TRUE(found.ok()) << found.status();
    model_ = *found;
  }

  std::vector<int64_t> Lengths(int64_t max_seq_len, int64_t pad) const {
    InferenceCore core(repo_.get(), max_seq_len, 0, pad);
    return core.ForwardLengths(*model_);
  }

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<ModelRepository> repo_;
  ModelEntryPtr model_;
};

TEST_F(InferenceWarmUpTest, ForwardLengthsAreThePaddedLengthsARequestCanRunAt) {
  EXPECT_EQ(Lengths(1024, 256), (std::vector<int64_t>{256, 512, 768, 1024}));
  // --max-seq-len 600: the longest request pads to 768, the last length needed.
  EXPECT_EQ(Lengths(600, 256), (std::vector<int64_t>{256, 512, 768}));
  // Not a divisor of max_context: the last multiple past it is capped there.
  EXPECT_EQ(Lengths(1024, 300), (std::vector<int64_t>{300, 600, 900, 1024}));
  // The server's limit above the model's: the model's max_context bounds it.
  EXPECT_EQ(Lengths(4096, 512), (std::vector<int64_t>{512, 1024}));
  EXPECT_TRUE(Lengths(1024, 1).empty());  // no padding: every length is possible
}

TEST_F(InferenceWarmUpTest, WarmUpRunsAForwardAtEachLengthAndRowCount) {
  InferenceCore core(repo_.get(), 1024, 0, 256);
  backend_->ResetPeakMemory();
  const int64_t weights_only = backend_->Memory().peak_bytes;
  const absl::StatusOr<int64_t> n = core.WarmUp(*model_);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 8);  // B = 1 at 256, 512, 768, 1024, each every step and last step only
  // B up to 3 at each length (a chunk of kChunkTokens holds ≥ 64 rows of ≤ 1024 steps).
  const absl::StatusOr<int64_t> batched = core.WarmUp(*model_, 3);
  ASSERT_TRUE(batched.ok()) << batched.status();
  EXPECT_EQ(*batched, 24);
  // The forwards allocated their activations on top of the weights.
  EXPECT_GT(backend_->Memory().peak_bytes, weights_only);
}

TEST_F(InferenceWarmUpTest, AModelWithoutWeightsIsRefusedNotCrashed) {
  ModelEntry empty;
  empty.name = "empty";
  empty.max_context = 1024;
  InferenceCore core(repo_.get(), 1024, 0, 256);
  EXPECT_EQ(core.WarmUp(empty).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace flashtick
