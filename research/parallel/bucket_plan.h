// BucketPlan: how a flat ParamStore buffer [total] is cut into all-reduce buckets.
// The backward sweep finishes tensors in reverse layout order (head first, embed
// last), so buckets are formed walking the layout backwards, each closed once it holds
// at least bucket_elements (PyTorch DDP's bucket_cap_mb, 25 MiB by default, in
// elements) and cut only at tensor boundaries. A bucket is one contiguous element range
// [offset, offset + count) of the flat buffer, alignment gaps included (they are zero
// on every replica, so summing them is harmless). Bucket 0 is the first to be final.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/param_layout.h"

namespace flashtick {

struct Bucket {
  int64_t offset = 0;       // elements
  int64_t count = 0;        // elements
  std::vector<int> params;  // the layout's tensor indices it covers
};

class BucketPlan {
 public:
  static absl::StatusOr<BucketPlan> Create(const ParamLayout& layout, int64_t bucket_elements);

  const std::vector<Bucket>& buckets() const { return buckets_; }
  int bucket_of(int param) const { return bucket_of_[param]; }
  int64_t total() const { return total_; }
  int num_params() const { return static_cast<int>(bucket_of_.size()); }

 private:
  std::vector<Bucket> buckets_;
  std::vector<int> bucket_of_;
  int64_t total_ = 0;
};

}  // namespace flashtick
