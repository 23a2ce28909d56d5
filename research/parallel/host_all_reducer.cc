// HostAllReducer: buckets summed by a HostReduceGroup (research/parallel/host_all_reducer.h).
#include "research/parallel/host_all_reducer.h"

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::StatusOr<std::unique_ptr<HostAllReducer>> HostAllReducer::Create(
    std::shared_ptr<ReduceGroup> group, int rank, Backend* backend, BucketPlan plan) {
  if (group == nullptr) return absl::InvalidArgumentError("host all-reduce: no group");
  if (backend == nullptr || backend->device() != DeviceKind::kCpu)
    return absl::InvalidArgumentError(absl::StrCat(
        "the host all-reducer sums host memory; replica ", rank, " runs on ",
        backend == nullptr ? std::string("no backend") : backend->name(),
        " (use the NCCL all-reducer for GPUs)"));
  if (rank < 0 || rank >= group->world_size())
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " not in [0, ", group->world_size(), ")"));
  return std::unique_ptr<HostAllReducer>(new HostAllReducer(std::move(group), rank, std::move(plan)));
}

absl::Status HostAllReducer::SumHost(absl::Span<double> values) {
  return group_->AllReduceSum(rank(), values.data(), static_cast<int64_t>(values.size()),
                              DType::kF64);
}

absl::Status HostAllReducer::LaunchBucket(int bucket, void* data, int64_t count, DType dtype) {
  return group_->AllReduceSum(rank(), data, count, dtype);
}

}  // namespace flashtick
