// LatencyHistogram (see latency_histogram.h).
#include "bench/load_gen/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace flashtick::bench {
namespace {
constexpr int64_t kHalf = LatencyHistogram::kSubBuckets / 2;
}

// Values below kSubBuckets index themselves. Above, with shift = bit_width - bits,
// the top `bits` bits (v >> shift, in [kHalf, kSubBuckets)) pick the sub-bucket;
// each further doubling adds kHalf buckets.
int LatencyHistogram::BucketIndex(int64_t value) {
  if (value < kSubBuckets) return static_cast<int>(value);
  const int shift = std::bit_width(static_cast<uint64_t>(value)) - kSubBucketBits;
  const int64_t sub = value >> shift;
  return static_cast<int>(kSubBuckets + (shift - 1) * kHalf + (sub - kHalf));
}

int64_t LatencyHistogram::BucketHighest(int index) {
  if (index < kSubBuckets) return index;
  const int64_t above = index - kSubBuckets;
  const int shift = static_cast<int>(above / kHalf) + 1;
  const int64_t sub = kHalf + above % kHalf;
  return ((sub + 1) << shift) - 1;
}

LatencyHistogram::LatencyHistogram() : counts_(BucketIndex(kMaxValue) + 1, 0) {}

void LatencyHistogram::Record(int64_t value) {
  value = std::max<int64_t>(value, 0);
  if (value > kMaxValue) {
    value = kMaxValue;
    ++clamped_;
  }
  ++counts_[BucketIndex(value)];
  min_ = count_ ? std::min(min_, value) : value;
  max_ = std::max(max_, value);
  sum_ += value;
  ++count_;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  min_ = count_ ? std::min(min_, other.min_) : other.min_;
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
  count_ += other.count_;
  clamped_ += other.clamped_;
}

int64_t LatencyHistogram::Percentile(double q) const {
  if (count_ == 0) return 0;
  const double clamped_q = std::clamp(q, 0.0, 1.0);
  const int64_t rank =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(clamped_q * static_cast<double>(count_))));
  int64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(BucketHighest(static_cast<int>(i)), min_, max_);
  }
  return max_;
}

}  // namespace flashtick::bench
