// LatencyHistogram: an HDR-style log-linear histogram of non-negative integer values
// (the load generator records nanoseconds). Debian bookworm packages no C/C++
// HdrHistogram, so this is the same bucketing in a few lines: each power of two
// [2^k, 2^(k+1)) is split into kSubBuckets/2 equal sub-buckets (values below
// kSubBuckets are exact), so a bucket is never wider than 2/kSubBuckets of the values
// in it. With kSubBuckets = 256 a percentile is within 0.8% of the exact sample
// (G. Tene, HdrHistogram, https://github.com/HdrHistogram/HdrHistogram, "significant
// digits"; here about 2.1 of them). Memory is fixed (~4.6k counters up to 2^42 ns,
// 73 minutes), recording is O(1) with no allocation, so millions of samples cost the
// generator nothing measurable. Not thread-safe: one recording thread.
#pragma once

#include <cstdint>
#include <vector>

namespace flashtick::bench {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 8;
  static constexpr int64_t kSubBuckets = int64_t{1} << kSubBucketBits;
  // Values above this are recorded as this (and counted in clamped()).
  static constexpr int64_t kMaxValue = (int64_t{1} << 42) - 1;

  LatencyHistogram();

  void Record(int64_t value);
  // Adds every sample of `other` (same bucketing), as if each had been recorded here.
  void Merge(const LatencyHistogram& other);
  // Nearest-rank percentile, q in [0, 1]: the highest value equivalent to the
  // rank's bucket (never below the exact sample), capped at the exact maximum.
  // 0 when empty.
  int64_t Percentile(double q) const;

  int64_t count() const { return count_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0.0; }
  int64_t clamped() const { return clamped_; }

  // Bucket arithmetic, public for the tests.
  static int BucketIndex(int64_t value);
  static int64_t BucketHighest(int index);

 private:
  std::vector<int64_t> counts_;
  int64_t count_ = 0, min_ = 0, max_ = 0, clamped_ = 0;
  __int128 sum_ = 0;  // 2^42 × 2^63 samples cannot overflow it
};

}  // namespace flashtick::bench
