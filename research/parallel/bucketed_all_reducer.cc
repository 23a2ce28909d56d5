// BucketedAllReducer: in-order bucket launches (research/parallel/bucketed_all_reducer.h).
#include "research/parallel/bucketed_all_reducer.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

absl::Status BucketedAllReducer::Begin(const TensorView& flat) {
  if (active_)
    return absl::FailedPreconditionError("all-reduce: Begin while the previous sum is unfinished");
  if (flat.data == nullptr || flat.numel() != plan_.total() || !flat.contiguous())
    return absl::InvalidArgumentError(absl::StrCat(
        "all-reduce: expected a contiguous flat buffer of ", plan_.total(),
        " elements, got ", flat.DebugString()));
  if (flat.dtype != DType::kF32 && flat.dtype != DType::kF64)
    return absl::InvalidArgumentError(absl::StrCat(
        "all-reduce: gradients are fp32 or fp64, got ", DTypeName(flat.dtype)));
  flat_ = flat;
  active_ = true;
  ready_count_.assign(plan_.buckets().size(), 0);
  param_seen_.assign(plan_.num_params(), false);
  next_ = 0;
  return absl::OkStatus();
}

absl::Status BucketedAllReducer::ParamReady(int param) {
  if (!active_) return absl::FailedPreconditionError("all-reduce: ParamReady before Begin");
  if (param < 0 || param >= static_cast<int>(param_seen_.size()))
    return absl::InvalidArgumentError(absl::StrCat("all-reduce: no parameter ", param));
  if (param_seen_[param]) return absl::OkStatus();  // final already; counted once
  param_seen_[param] = true;
  ++ready_count_[plan_.bucket_of(param)];
  return LaunchReady(/*all=*/false);
}

absl::Status BucketedAllReducer::LaunchReady(bool all) {
  const auto& buckets = plan_.buckets();
  while (next_ < static_cast<int>(buckets.size())) {
    const Bucket& b = buckets[next_];
    const bool complete = ready_count_[next_] == static_cast<int>(b.params.size());
    if (!complete && !all) break;
    char* base = static_cast<char*>(flat_.data);
    void* data = base + static_cast<size_t>(b.offset) * DTypeSize(flat_.dtype);
    RETURN_IF_ERROR(LaunchBucket(next_, data, b.count, flat_.dtype));
    ++(complete && !all ? launched_early_ : launched_late_);
    ++next_;
  }
  return absl::OkStatus();
}

absl::Status BucketedAllReducer::Finish() {
  if (!active_) return absl::FailedPreconditionError("all-reduce: Finish before Begin");
  active_ = false;
  RETURN_IF_ERROR(LaunchReady(/*all=*/true));
  return AwaitLaunched();
}

}  // namespace flashtick
