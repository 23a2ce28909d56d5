// AllFinite (common/finite.h) against std::isfinite: every special value, at every
// position relative to the scan's blocks.
#include "common/finite.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace flashtick {
namespace {

TEST(AllFinite, EmptyAndOrdinaryValuesAreFinite) {
  EXPECT_TRUE(AllFinite(nullptr, 0));
  const std::vector<float> v = {0.0f,
                                -0.0f,
                                1.0f,
                                -3.0e38f,
                                std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::lowest(),
                                std::numeric_limits<float>::min(),
                                std::numeric_limits<float>::denorm_min(),
                                -1e-45f};
  EXPECT_TRUE(AllFinite(v.data(), v.size()));
}

TEST(AllFinite, FindsEachNonFiniteValueWhereverItSits) {
  const float bad[] = {
      std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::signaling_NaN(), std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity()};
  // Sizes and positions around the 4,096-value blocks: first, last, either side of a
  // block edge, and a tail shorter than a block.
  for (size_t n : {size_t{1}, size_t{7}, size_t{4096}, size_t{4097}, size_t{10000}}) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i)) * 1e30f;
    ASSERT_TRUE(AllFinite(v.data(), n)) << n;
    for (size_t at : {size_t{0}, n / 2, n - 1, size_t{4095}, size_t{4096}}) {
      if (at >= n) continue;
      for (float x : bad) {
        const float keep = v[at];
        v[at] = x;
        EXPECT_FALSE(AllFinite(v.data(), n)) << "n " << n << " at " << at << " value " << x;
        v[at] = keep;
      }
    }
  }
}

}  // namespace
}  // namespace flashtick
