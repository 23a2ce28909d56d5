// BucketPlan: buckets in reverse layout order (research/parallel/bucket_plan.h).
#include "research/parallel/bucket_plan.h"

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::StatusOr<BucketPlan> BucketPlan::Create(const ParamLayout& layout, int64_t bucket_elements) {
  if (bucket_elements < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("all-reduce bucket size must be >= 1 element, got ", bucket_elements));
  const auto& params = layout.params();
  if (params.empty()) return absl::InvalidArgumentError("the parameter layout is empty");
  BucketPlan plan;
  plan.total_ = layout.total();
  plan.bucket_of_.assign(params.size(), -1);
  // end: one past the last element of the open bucket (the next tensor's offset, or
  // total for the last tensor, so gaps belong to the tensor before them).
  int64_t end = layout.total();
  Bucket open;
  for (int i = static_cast<int>(params.size()) - 1; i >= 0; --i) {
    open.params.push_back(i);
    plan.bucket_of_[i] = static_cast<int>(plan.buckets_.size());
    open.offset = params[i].offset;
    open.count = end - open.offset;
    if (open.count >= bucket_elements || i == 0) {
      end = open.offset;
      plan.buckets_.push_back(std::move(open));
      open = Bucket();
    }
  }
  if (params.front().offset != 0)  // the layout starts at 0; the plan covers everything
    return absl::InternalError("parameter layout does not start at element 0");
  return plan;
}

}  // namespace flashtick
