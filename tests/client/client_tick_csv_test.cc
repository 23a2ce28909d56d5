// Client tick CSV: raw ticks resample onto the 1-second grid (last quote per
// second, flow summed, quiet seconds carried forward, backfill before the first
// quote) and equal ComputeFeatures of the same grid; feature CSVs round-trip
// bit for bit; malformed files name their line.
#include "client/tick_csv.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ticks/features.h"

namespace flashtick {
namespace {

std::string TempPath(const std::string& leaf) {
  return testing::TempDir() + "/" + std::to_string(::getpid()) + "_" + leaf;
}

std::string Write(const std::string& leaf, const std::string& text) {
  const std::string path = TempPath(leaf);
  std::ofstream(path) << text;
  return path;
}

TEST(TickCsv, RawTicksResampleOntoTheGrid) {
  const std::string path = Write("raw.csv",
                                 "timestamp,bid,ask,flow\n"
                                 "1.2,100.00,100.02,3\n"
                                 "1.7,100.01,100.03,-1\n"   // same second: last quote, flow 2
                                 "09:30:04,100.05,100.06,4\n");  // wall clock = step 4
  auto table = ReadTickCsv(path);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->from_raw_ticks);
  EXPECT_EQ(table->steps, 5);
  EXPECT_EQ(table->backfilled_steps, 1);
  // Step 0 is backfilled with the first row's quote; step 1 ends on its last
  // quote with flow 3 - 1; steps 2-3 carry it forward; step 4 is the last row.
  SessionGrid grid;
  grid.bid = {100.00, 100.01, 100.01, 100.01, 100.05};
  grid.ask = {100.02, 100.03, 100.03, 100.03, 100.06};
  grid.flow = {0, 2, 0, 0, 4};
  EXPECT_EQ(table->features, ComputeFeatures(grid));
}

TEST(TickCsv, FeatureCsvRoundTripsExactly) {
  const SessionGrid day = SimpleSyntheticDay(5, 50);
  const std::vector<float> features = ComputeFeatures(day);
  const std::string path = TempPath("features.csv");
  ASSERT_TRUE(WriteFeatureCsv(path, features, day.steps()).ok());
  auto table = ReadTickCsv(path);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_FALSE(table->from_raw_ticks);
  EXPECT_EQ(table->steps, 50);
  EXPECT_EQ(table->features, features);
}

TEST(TickCsv, ErrorsNameTheLine) {
  auto status = ReadTickCsv(Write("bad1.csv", "timestamp,bid,ask,flow\n1,100,100.1,1\n0,100,1,1\n"))
                    .status();
  EXPECT_NE(std::string(status.message()).find(":3: timestamps go backwards"), std::string::npos)
      << status;
  status = ReadTickCsv(Write("bad2.csv", "timestamp,bid,ask,flow\n1,nan,100.1,1\n")).status();
  EXPECT_NE(std::string(status.message()).find(":2:"), std::string::npos) << status;
  status = ReadTickCsv(Write("bad3.csv", "time,price\n1,2\n")).status();
  EXPECT_NE(std::string(status.message()).find("unknown header"), std::string::npos) << status;
  status = ReadTickCsv(Write("bad4.csv", "timestamp,bid,ask,flow\n23400,100,100.1,1\n")).status();
  EXPECT_NE(std::string(status.message()).find("outside the 09:30-16:00 session"),
            std::string::npos)
      << status;
  EXPECT_EQ(ReadTickCsv(TempPath("missing.csv")).status().code(), absl::StatusCode::kNotFound);
}

// The cases an outside probe found in the CLI's own reader.
TEST(TickCsv, NonFiniteTimestampsAreRefused) {
  // "nan" parsed as seconds reached a float-to-int64 cast (undefined behaviour).
  for (const char* t : {"nan", "inf", "-inf", "09:30:nan"}) {
    auto r = ParseTickCsv(std::string("timestamp,bid,ask,flow\n") + t + ",100,100.1,1\n", "t.csv");
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_NE(std::string(r.status().message()).find("t.csv:2:"), std::string::npos) << r.status();
  }
}

TEST(TickCsv, CrossedQuotesAreDroppedNotSentAsNegativeSpreads) {
  auto r = ParseTickCsv("timestamp,bid,ask,flow\n0,100,100.1,1\n1,100.2,100.1,1\n2,100,100.1,1\n",
                        "x.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->dropped_rows, 1);
  for (int64_t t = 0; t < r->steps; ++t) {
    EXPECT_GE(r->features[t * kNumFeatures + 1], 0.0f) << "spread at step " << t;
  }
}

TEST(TickCsv, HugePricesAreRefused) {
  auto r = ParseTickCsv("timestamp,bid,ask,flow\n0,1e308,1e308,1\n", "h.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("h.csv:2:"), std::string::npos) << r.status();
  // A jump from 1e-300 to 1e9 is an infinite log return: refused, not sent.
  auto jump = ParseTickCsv("timestamp,bid,ask,flow\n0,1e-300,1e-300,0\n1,1e9,1e9,0\n", "j.csv");
  ASSERT_FALSE(jump.ok());
  EXPECT_NE(std::string(jump.status().message()).find("step 1"), std::string::npos)
      << jump.status();
}

TEST(TickCsv, ReorderingWithinASecondIsRefused) {
  auto r = ParseTickCsv("timestamp,bid,ask,flow\n1.7,100,100.1,1\n1.2,101,101.1,1\n", "o.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("o.csv:3: timestamps go backwards"),
            std::string::npos)
      << r.status();
}

TEST(TickCsv, ReadsTheResearchQuotesLayout) {
  // timestamp,bid,ask,bid_size,ask_size with ISO timestamps, as ticks/ reads.
  std::string text = "timestamp,bid,ask,bid_size,ask_size\n";
  for (int s = 0; s < 23400; s += 60) {
    const int h = 9 + (30 * 60 + s) / 3600, m = ((30 * 60 + s) / 60) % 60;
    char line[96];
    std::snprintf(line, sizeof line, "2024-03-01 %02d:%02d:00,%.2f,%.2f,5,7\n", h, m,
                  100.0 + (s % 7) * 0.01, 100.02 + (s % 7) * 0.01);
    text += line;
  }
  auto r = ParseTickCsv(text, "q.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps, kSessionSeconds);
  EXPECT_TRUE(r->from_raw_ticks);
}

}  // namespace
}  // namespace flashtick
