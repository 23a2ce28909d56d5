// BucketedAllReducer: the bucket bookkeeping shared by every GradientAllReducer
// (trainer/gradient_all_reducer.h). ParamReady counts final tensors per bucket
// (BucketPlan); a complete bucket is launched at once, but strictly in bucket order,
// because a collective must be issued in the same order on every replica. Finish
// launches what is left (tensors nothing wrote are zeroed by the store's Complete
// before it) and waits as the subclass defines. Subclasses say how one bucket is
// summed (LaunchBucket) and how the launched sums are awaited (AwaitLaunched).
#pragma once

#include <cstdint>
#include <vector>

#include "trainer/gradient_all_reducer.h"
#include "research/parallel/bucket_plan.h"

namespace flashtick {

class BucketedAllReducer : public GradientAllReducer {
 public:
  BucketedAllReducer(BucketPlan plan, int rank, int world_size)
      : plan_(std::move(plan)), rank_(rank), world_size_(world_size) {}

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  absl::Status Begin(const TensorView& flat) override;
  absl::Status ParamReady(int param) override;
  absl::Status Finish() override;
  // Makes replicas blocked in a collective give up (another replica failed).
  virtual void Abort() = 0;

  const BucketPlan& plan() const { return plan_; }
  // Buckets launched from ParamReady (during the sweep) and from Finish, over every
  // sum so far: how much of the communication could overlap the backward pass.
  int64_t launched_early() const { return launched_early_; }
  int64_t launched_late() const { return launched_late_; }

 protected:
  // Sums `count` elements at `data` (of the flat buffer being reduced) over replicas.
  virtual absl::Status LaunchBucket(int bucket, void* data, int64_t count, DType dtype) = 0;
  virtual absl::Status AwaitLaunched() = 0;

 private:
  absl::Status LaunchReady(bool all);

  BucketPlan plan_;
  int rank_, world_size_;
  TensorView flat_;
  bool active_ = false;
  std::vector<int> ready_count_;
  std::vector<bool> param_seen_;
  int next_ = 0;  // the next bucket to launch
  int64_t launched_early_ = 0, launched_late_ = 0;
};

}  // namespace flashtick
