// HostReduceGroup: barrier + sliced sum over threads (research/parallel/host_reduce_group.h).
#include "research/parallel/host_reduce_group.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {
namespace {

template <typename T>
void SumSlice(const std::vector<void*>& ptrs, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    double s = 0.0;
    for (void* p : ptrs) s += static_cast<const T*>(p)[i];
    for (void* p : ptrs) static_cast<T*>(p)[i] = static_cast<T>(s);
  }
}

}  // namespace

absl::Status HostReduceGroup::Arrive() {
  std::unique_lock<std::mutex> lock(mu_);
  if (aborted_) return absl::AbortedError("all-reduce group aborted: another replica failed");
  const int64_t gen = generation_;
  if (++arrived_ == world_size_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return absl::OkStatus();
  }
  cv_.wait(lock, [&] { return generation_ != gen || aborted_; });
  if (generation_ == gen)
    return absl::AbortedError("all-reduce group aborted: another replica failed");
  return absl::OkStatus();
}

void HostReduceGroup::Abort() {
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

absl::Status HostReduceGroup::AllReduceSum(int rank, void* data, int64_t count, DType dtype) {
  if (rank < 0 || rank >= world_size_)
    return absl::InvalidArgumentError(absl::StrCat("rank ", rank, " not in [0, ", world_size_, ")"));
  if (dtype != DType::kF32 && dtype != DType::kF64)
    return absl::InvalidArgumentError(
        absl::StrCat("host all-reduce sums fp32 or fp64, got ", DTypeName(dtype)));
  ptrs_[rank] = data;
  RETURN_IF_ERROR(Arrive());  // every rank's buffer is published and complete
  const int64_t begin = count * rank / world_size_, end = count * (rank + 1) / world_size_;
  if (dtype == DType::kF32) {
    SumSlice<float>(ptrs_, begin, end);
  } else {
    SumSlice<double>(ptrs_, begin, end);
  }
  return Arrive();  // every slice is written before anyone reuses its buffer
}

}  // namespace flashtick
