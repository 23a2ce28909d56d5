// Attention rollout (research/sweep/attention_rollout.h): exact against the dense
// product of (½·A_l + ½·I) when nothing is pruned, the indirect route a one-layer
// probe cannot see, pruning as a lower bound, and the refusals.
#include "research/sweep/attention_rollout.h"

#include <gtest/gtest.h>

#include <random>

namespace flashtick {
namespace {

using Matrix = std::vector<std::vector<double>>;  // [query][key], causal rows summing to 1

Matrix RandomCausal(int64_t T, std::mt19937* rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Matrix a(T, std::vector<double>(T, 0.0));
  for (int64_t i = 0; i < T; ++i) {
    double sum = 0;
    for (int64_t j = 0; j <= i; ++j) sum += a[i][j] = u(*rng);
    for (int64_t j = 0; j <= i; ++j) a[i][j] /= sum;
  }
  return a;
}

AttentionRowsFn RowsOf(const std::vector<Matrix>& layers) {
  return [layers](int l, const std::vector<int64_t>& steps) {
    std::vector<std::vector<double>> out;
    for (int64_t s : steps) out.push_back(layers[l][s]);
    return absl::StatusOr<std::vector<std::vector<double>>>(out);
  };
}

TEST(AttentionRollout, MatchesTheDenseProductWhenNothingIsPruned) {
  std::mt19937 rng(7);
  const int64_t T = 6;
  const std::vector<Matrix> layers = {RandomCausal(T, &rng), RandomCausal(T, &rng),
                                      RandomCausal(T, &rng)};
  const int64_t query = T - 1;
  // Dense: r ← r·(½A + ½I), from the top layer down.
  std::vector<double> r(T, 0.0);
  r[query] = 1.0;
  for (int l = 2; l >= 0; --l) {
    std::vector<double> next(T, 0.0);
    for (int64_t i = 0; i < T; ++i) {
      next[i] += 0.5 * r[i];
      for (int64_t j = 0; j < T; ++j) next[j] += 0.5 * r[i] * layers[l][i][j];
    }
    r = next;
  }
  auto got = AttentionRollout(3, T, query, RowsOf(layers), {/*keep=*/100, /*floor=*/0.0});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), static_cast<size_t>(T));
  double total = 0;
  for (const auto& [step, f] : *got) {
    EXPECT_NEAR(f, r[step], 1e-12) << step;
    total += f;
  }
  EXPECT_NEAR(total, 1.0, 1e-12) << "rollout of a row-stochastic chain keeps its mass";
}

// The sign reaches the query through an intermediate step: layer 1's query looks only at
// step 3, and step 3 looked at the cue (step 1) in layer 0. The query's own attention on
// the cue is 0 in both layers; rollout credits the cue with ½·½.
TEST(AttentionRollout, CreditsTheCueThroughAnIntermediateStep) {
  const int64_t T = 6;
  Matrix layer0(T, std::vector<double>(T, 0.0)), layer1 = layer0;
  for (int64_t i = 0; i < T; ++i) layer0[i][i] = layer1[i][i] = 1.0;  // self by default
  layer0[3] = {0, 1, 0, 0, 0, 0};
  layer1[5] = {0, 0, 0, 1, 0, 0};
  auto got = AttentionRollout(2, T, 5, RowsOf({layer0, layer1}), {100, 0.0});
  ASSERT_TRUE(got.ok()) << got.status();
  const std::vector<std::pair<int64_t, double>> want = {{1, 0.25}, {3, 0.25}, {5, 0.5}};
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*got)[i].first, want[i].first);
    EXPECT_DOUBLE_EQ((*got)[i].second, want[i].second);
  }
}

TEST(AttentionRollout, PruningKeepsTheLargestFlowsAndNeverAddsMass) {
  std::mt19937 rng(11);
  const int64_t T = 40;
  const std::vector<Matrix> layers = {RandomCausal(T, &rng), RandomCausal(T, &rng),
                                      RandomCausal(T, &rng), RandomCausal(T, &rng)};
  auto exact = AttentionRollout(4, T, T - 1, RowsOf(layers), {1000, 0.0});
  auto pruned = AttentionRollout(4, T, T - 1, RowsOf(layers), {3, 1e-3});
  ASSERT_TRUE(exact.ok() && pruned.ok());
  EXPECT_LE(pruned->size(), 3u);
  std::vector<double> e(T, 0.0);
  for (const auto& [step, f] : *exact) e[step] = f;
  double total = 0;
  for (const auto& [step, f] : *pruned) {
    EXPECT_LE(f, e[step] + 1e-12) << "a pruned rollout is a lower bound, step " << step;
    total += f;
  }
  EXPECT_GT(total, 0.0);
  EXPECT_LT(total, 1.0);
}

TEST(AttentionRollout, RefusesBadQueriesAndRows) {
  const Matrix eye = {{1, 0}, {0, 1}};
  EXPECT_EQ(AttentionRollout(1, 2, 2, RowsOf({eye})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AttentionRollout(1, 2, -1, RowsOf({eye})).status().code(),
            absl::StatusCode::kInvalidArgument);
  const AttentionRowsFn short_rows = [](int, const std::vector<int64_t>& steps) {
    return absl::StatusOr<std::vector<std::vector<double>>>(
        std::vector<std::vector<double>>(steps.size(), {0.5, 0.5}));
  };
  EXPECT_EQ(AttentionRollout(1, 3, 2, short_rows).status().code(),
            absl::StatusCode::kInvalidArgument)
      << "rows of 2 keys for a sequence of 3";
  const AttentionRowsFn too_few = [](int, const std::vector<int64_t>&) {
    return absl::StatusOr<std::vector<std::vector<double>>>(std::vector<std::vector<double>>{});
  };
  EXPECT_EQ(AttentionRollout(1, 2, 1, too_few).status().code(),
            absl::StatusCode::kInvalidArgument);
  const AttentionRowsFn failing = [](int, const std::vector<int64_t>&) {
    return absl::StatusOr<std::vector<std::vector<double>>>(absl::InternalError("probe"));
  };
  EXPECT_EQ(AttentionRollout(1, 2, 1, failing).status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace flashtick
