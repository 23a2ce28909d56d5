// CompactStopReason (research/report/stop_reason_text.h): consecutive folds with the
// same stop words become one entry; anything else is kept in place.
#include "research/report/stop_reason_text.h"

#include <gtest/gtest.h>

namespace flashtick {
namespace {

TEST(CompactStopReason, FoldsARunOfIdenticalFoldEntries) {
  const std::string budget = "time budget: 240 s of training";
  std::string reason = "fold 0 " + budget + " (3931 of 4048 steps)";
  for (int f = 1; f <= 19; ++f) reason += "; fold " + std::to_string(f) + " " + budget + " (2 of 3 steps)";
  EXPECT_EQ(CompactStopReason(reason), "fold 0 " + budget + " (3931 of 4048 steps); folds 1–19 " +
                                           budget + " (2 of 3 steps each)");
}

TEST(CompactStopReason, KeepsSingleEntriesGapsAndDifferentWords) {
  EXPECT_EQ(CompactStopReason(""), "");
  const std::string one = "fold 0 early stop: call-step validation loss 0.4 at step 1475 not "
                          "beaten in 8 checks (4000 of 4098 steps)";
  EXPECT_EQ(CompactStopReason(one), one);
  // A gap in the fold numbers, or other words, starts a new entry.
  EXPECT_EQ(CompactStopReason("fold 1 x (2 of 3 steps); fold 3 x (2 of 3 steps)"),
            "fold 1 x (2 of 3 steps); fold 3 x (2 of 3 steps)");
  EXPECT_EQ(CompactStopReason("fold 1 x (2 of 3 steps); fold 2 y (2 of 3 steps); fold 3 y (2 of 3 steps)"),
            "fold 1 x (2 of 3 steps); folds 2–3 y (2 of 3 steps each)");
  // Text that is not a fold entry stays where it was and breaks a run.
  EXPECT_EQ(CompactStopReason("fold 1 x; cancelled; fold 2 x; fold 3 x"),
            "fold 1 x; cancelled; folds 2–3 x");
  EXPECT_EQ(CompactStopReason("fold x y; folder 2 z"), "fold x y; folder 2 z");
}

}  // namespace
}  // namespace flashtick
