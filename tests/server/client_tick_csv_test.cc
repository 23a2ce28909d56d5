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

#include "train/features.h"

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

}  // namespace
}  // namespace flashtick
