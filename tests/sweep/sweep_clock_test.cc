// SweepClock (research/sweep/sweep_clock.h): the wall-clock of a sweep summed over the
// calls that worked on its directory, a killed call's time kept up to its last
// heartbeat, and a ledger that cannot be read set aside instead of failing the sweep.
#include "research/sweep/sweep_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/file_io.h"

namespace flashtick {
namespace {

using std::chrono::milliseconds;

std::string FreshDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ::testing::TempDir() + "/sweep_clock_" + info->name();
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(MakeDirs(dir).ok());
  return dir;
}

nlohmann::json Ledger(const std::string& dir) {
  absl::StatusOr<std::string> text = ReadFileToString(SweepClock::LedgerPath(dir));
  EXPECT_TRUE(text.ok()) << text.status();
  return nlohmann::json::parse(text.ok() ? *text : "{}");
}

TEST(SweepClock, SumsTheCallsOnOneDirectory) {
  const std::string dir = FreshDir();
  double first = 0;
  {
    SweepClock clock(dir, milliseconds(10));
    EXPECT_EQ(clock.calls(), 1);
    std::this_thread::sleep_for(milliseconds(60));
    first = clock.total_seconds();
    EXPECT_GE(first, 0.06);
  }
  EXPECT_EQ(Ledger(dir)["calls"], 1);
  EXPECT_GE(Ledger(dir)["seconds"].get<double>(), first);
  const double after_first = Ledger(dir)["seconds"].get<double>();
  SweepClock second(dir, milliseconds(10));
  EXPECT_EQ(second.calls(), 2);
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_GE(second.this_call_seconds(), 0.03);
  EXPECT_LT(second.this_call_seconds(), second.total_seconds());
  EXPECT_NEAR(second.total_seconds() - second.this_call_seconds(), after_first, 1e-3);
}

// A call killed without warning (no destructor) leaves the figure of its last beat.
TEST(SweepClock, AKilledCallKeepsItsLastHeartbeat) {
  const std::string dir = FreshDir();
  ASSERT_TRUE(WriteFileAtomic(SweepClock::LedgerPath(dir), R"({"seconds": 470.0, "calls": 1})").ok());
  {
    SweepClock clock(dir, milliseconds(10));
    EXPECT_EQ(clock.calls(), 2);
    EXPECT_GE(clock.total_seconds(), 470.0);
    std::this_thread::sleep_for(milliseconds(80));
    // What a kill -9 now would leave: the beats have already written this call's time.
    const nlohmann::json mid = Ledger(dir);
    EXPECT_EQ(mid["calls"], 2);
    EXPECT_GT(mid["seconds"].get<double>(), 470.0 + 0.03);
  }
  EXPECT_GE(Ledger(dir)["seconds"].get<double>(), 470.08);
}

TEST(SweepClock, AnUnreadableLedgerStartsAgain) {
  for (const char* bad : {"not json", R"({"seconds": -5, "calls": 1})",
                          R"({"seconds": "many", "calls": 1})", R"([1, 2])",
                          R"({"seconds": 3.0})"}) {
    const std::string dir = FreshDir();
    ASSERT_TRUE(WriteFileAtomic(SweepClock::LedgerPath(dir), bad).ok());
    SweepClock clock(dir, milliseconds(10));
    EXPECT_EQ(clock.calls(), 1) << bad;
    EXPECT_LT(clock.total_seconds(), 1.0) << bad;
  }
}

}  // namespace
}  // namespace flashtick
