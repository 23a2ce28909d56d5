// HostAllReducer: a GradientAllReducer for replicas on the CPU backend: one thread
// each summing through a shared HostReduceGroup, or one process each summing through a
// TcpReduceGroup (the same sums; reduce_group.h). The CPU backend runs ops
// synchronously, so a bucket is summed inside ParamReady when it completes (no
// overlap on the CPU; the bucket order and readiness logic are the GPU path's).
// Its purpose: data parallelism REALLY runs in CI, and N replicas on shares of the
// batch are checked against one trainer on the whole batch (tests/parallel/).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "research/parallel/bucketed_all_reducer.h"
#include "research/parallel/reduce_group.h"

namespace flashtick {

class HostAllReducer final : public BucketedAllReducer {
 public:
  // backend: this replica's (must be the CPU backend: buffers are host memory).
  static absl::StatusOr<std::unique_ptr<HostAllReducer>> Create(
      std::shared_ptr<ReduceGroup> group, int rank, Backend* backend, BucketPlan plan);

  absl::Status SumHost(absl::Span<double> values) override;
  void Abort() override { group_->Abort(); }

 protected:
  absl::Status LaunchBucket(int bucket, void* data, int64_t count, DType dtype) override;
  absl::Status AwaitLaunched() override { return absl::OkStatus(); }

 private:
  HostAllReducer(std::shared_ptr<ReduceGroup> group, int rank, BucketPlan plan)
      : BucketedAllReducer(std::move(plan), rank, group->world_size()), group_(std::move(group)) {}
  std::shared_ptr<ReduceGroup> group_;
};

}  // namespace flashtick
