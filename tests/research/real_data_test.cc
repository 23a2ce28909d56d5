// Real prices through the tick-file pipeline. tests/data/r_lazyload_to_csv.py
// fetches Debian's r-cran-fbasics and r-cran-timeseries at test time (GPL data,
// never committed), decodes R's lazy-load databases and writes CSV; these tests
// read them with our readers. When apt cannot fetch (exit 77) every test SKIPs
// with the reason (ctest shows it as skipped, not passed).
// Figures the data hold (checked independently by the script's summary.json):
//   usdthb: 2,984 Reuters quotes, June 1997; 8 crossed or locked = 7 locked
//           (bid = ask) + 1 with a zero ask (row 2,787: bid 25.3, ask 0); also
//           1 row out of order (02:36 after 02:56 on June 20) and 7 exact repeats
//           of a contributor's quote in the same minute.
//   USDCHF: 62,496 half-hourly quotes = 1,302 weekday sessions × 48.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ticks/cleaning.h"
#include "research/data/day_context.h"
#include "ticks/resample.h"
#include "ticks/timestamp.h"
#include "research/split/research_dataset.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

class RealDataTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/flashtick_realdata_XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      error_ = "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    const std::string err = dir_ + "/stderr.txt";
    const std::string cmd = std::string(FLASHTICK_PYTHON) + " " + FLASHTICK_SOURCE_DIR +
                            "/tests/data/r_lazyload_to_csv.py --out " + dir_ + " > " + dir_ +
                            "/stdout.txt 2> " + err;
    const int rc = std::system(cmd.c_str());
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
      skip_ = "real data unavailable: " + ss.str();
    } else if (rc != 0) {
      error_ = "converter failed (" + cmd + "): " + ss.str();
    } else {
      std::ifstream js(dir_ + "/summary.json");
      summary_ = nlohmann::json::parse(js, nullptr, /*allow_exceptions=*/false);
      if (summary_.is_discarded()) error_ = "summary.json is not JSON";
    }
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(error_.empty()) << error_;
  }
  static std::string Path(const char* name) { return dir_ + "/" + name; }

  static inline std::string dir_, skip_, error_;
  static inline nlohmann::json summary_;
};

TEST_F(RealDataTest, UsdThbQuotesCleanAsTheDataSay) {
  auto rows = ReadQuotesCsvFile(Path("usdthb.csv"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2984u);
  const CleanQuotes c = CleanTicks(*rows);
  std::cout << "usdthb cleaning: " << c.report.ToString() << "\n";
  EXPECT_EQ(c.report.crossed + c.report.locked, 8);
  EXPECT_EQ(c.report.locked, 7);
  EXPECT_EQ(c.report.crossed, 1);
  EXPECT_EQ(c.report.out_of_order, 1);
  EXPECT_EQ(c.report.duplicates, 7);
  EXPECT_EQ(c.report.non_positive, 0);
  EXPECT_EQ(c.report.kept, 2968);
  // The same rules computed in Python on the decoded R object.
  const auto& s = summary_["usdthb"];
  EXPECT_EQ(s["rows"], c.report.input_rows);
  EXPECT_EQ(s["kept"], c.report.kept);
  EXPECT_EQ(s["crossed"], c.report.crossed);
  EXPECT_EQ(s["locked"], c.report.locked);
  EXPECT_EQ(s["out_of_order"], c.report.out_of_order);
  EXPECT_EQ(s["duplicates"], c.report.duplicates);
  // The crossed row is the zero ask of 26 June 00:58.
  bool found = false;
  for (const Tick& t : *rows) found |= t.ask == 0.0 && t.bid == 25.3;
  EXPECT_TRUE(found);
}

TEST_F(RealDataTest, UsdThbOnTheBangkokSessionGrid) {
  auto rows = ReadQuotesCsvFile(Path("usdthb.csv"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  const CleanQuotes c = CleanTicks(*rows);
  SessionSpec spec;                     // 09:30–16:00, 1 s steps
  spec.clock_shift_seconds = 7 * 3600;  // Reuters stamps are GMT; Bangkok is GMT+7
  auto s = ResampleQuotes(c.ticks, spec, "USDTHB");
  ASSERT_TRUE(s.ok()) << s.status();
  // 21 weekdays of June 1997 (2nd..30th) all have quotes inside the window.
  ASSERT_EQ(s->days.size(), 21u);
  EXPECT_EQ(s->days.front().date, "1997-06-02");
  EXPECT_EQ(s->days.back().date, "1997-06-30");
  int64_t inside = 0;
  for (size_t d = 0; d < s->days.size(); ++d) {
    const SessionGrid& g = s->days[d];
    ASSERT_EQ(g.steps(), kSessionSeconds);
    EXPECT_EQ(s->stats[d].backfilled_steps, 0) << g.date;  // quotes run overnight
    inside += s->stats[d].rows_in_session;
    for (int64_t t = 0; t < g.steps(); ++t) {
      ASSERT_LT(g.bid[t], g.ask[t]) << g.date << " step " << t;
      // Dealer mids in June 1997 (before the 2 July float) span 22.2..28.1 baht.
      ASSERT_GT(g.mid(t), 22.0);
      ASSERT_LT(g.mid(t), 28.5);
    }
  }
  std::cout << "usdthb: " << s->days.size() << " sessions, " << inside
            << " quote rows inside 09:30-16:00 Bangkok, " << s->days_skipped << " dates skipped\n";
  auto ctx = DayContext::Build(s->days);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_EQ(ctx->total_steps(), 21 * kSessionSeconds);
  for (float v : ctx->features()) ASSERT_TRUE(std::isfinite(v));
}

TEST_F(RealDataTest, UsdChfHalfHourlyBars) {
  auto rows = ReadBarsCsvFile(Path("usdchf.csv"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 62496u);
  EXPECT_EQ(FormatTimestamp(rows->front().time_us), "1996-03-31 22:00:00");
  EXPECT_EQ(FormatTimestamp(rows->back().time_us), "2001-03-30 21:30:00");
  const CleanBarSeries c = CleanBars(*rows);
  std::cout << "usdchf cleaning: " << c.report.ToString() << "\n";
  EXPECT_EQ(c.report.dropped(), 0);
  EXPECT_EQ(summary_["usdchf"]["out_of_order"], 0);
  EXPECT_EQ(summary_["usdchf"]["duplicates"], 0);
  // A whole-day grid of 48 half-hour steps on Zurich summer time (UTC+2); days
  // with at least half their bars kept (DST moves a couple of bars across midnight).
  SessionSpec spec;
  spec.open_second = 0;
  spec.step_us = 1800 * kMicrosPerSecond;
  spec.steps = 48;
  spec.clock_shift_seconds = 2 * 3600;
  spec.min_rows_in_session = 24;
  auto s = ResampleBars(c.bars, spec, "USDCHF");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->days.size(), 1302u);
  EXPECT_EQ(s->days.front().date, "1996-04-01");
  // Step 0 of the first session holds the bar stamped 22:00 UTC = 00:00 UTC+2.
  EXPECT_DOUBLE_EQ(s->days.front().bid[0], rows->front().close);
  EXPECT_DOUBLE_EQ(s->days.front().bid[1], (*rows)[1].close);
  for (const SessionGrid& g : s->days) {
    for (int64_t t = 0; t < g.steps(); ++t) ASSERT_GT(g.mid(t), 1.0);
  }
  std::cout << "usdchf: " << s->days.size() << " sessions of 48 steps, " << s->days_skipped
            << " dates skipped, " << s->days.front().date << ".." << s->days.back().date << "\n";

  // Labels and purged splits on real prices: k = 4 half-hours, N = 512 steps
  // (over ten sessions of context), expanding walk-forward after 250 sessions.
  auto ds = ResearchDataset::Build(s->days, 4);
  ASSERT_TRUE(ds.ok()) << ds.status();
  SplitConfig split;
  split.context = 512;
  split.horizon = 4;
  split.train_days = 250;
  split.test_days = 21;
  auto folds = MakeSplits(split, ds->day_steps());
  ASSERT_TRUE(folds.ok()) << folds.status();
  EXPECT_EQ(folds->size(), (1302u - 250) / 21);
  auto labels = ds->LabelFold(folds->back());
  ASSERT_TRUE(labels.ok()) << labels.status();
  const auto& cnt = labels->train_counts;
  const double n = static_cast<double>(cnt[0] + cnt[1] + cnt[2]);
  std::cout << "usdchf labels (last fold, alpha " << labels->alpha << "): down " << cnt[0] / n
            << ", flat " << cnt[1] / n << ", up " << cnt[2] / n << " of " << n
            << " training samples; " << folds->back().purged << " purged\n";
  // α balances the training classes: flat ≥ ⅓ (ties at α are flat), up and down near ⅓.
  EXPECT_GE(cnt[1] / n, 1.0 / 3 - 1e-3);
  EXPECT_LT(cnt[1] / n, 0.45);
  EXPECT_NEAR(cnt[0] / n, cnt[2] / n, 0.05);
  // The purge zone is the N + k − 1 = 515 steps before the first test sample; only
  // its labelled steps (41 of every 48) are samples.
  EXPECT_GT(folds->back().purged, 515 * 41 / 48 - 41);
  EXPECT_LE(folds->back().purged, 515);
}

TEST_F(RealDataTest, MsftDecodedFromRMatchesThePackagesOwnCsv) {
  // The S4 timeSeries decoded by rserialize.py against extdata/msft.csv (';').
  auto decoded = ReadBarsCsvFile(Path("msft.csv"));
  auto shipped = ReadBarsCsvFile(Path("msft_extdata.csv"));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_TRUE(shipped.ok()) << shipped.status();
  ASSERT_EQ(decoded->size(), 249u);
  ASSERT_EQ(shipped->size(), 249u);
  for (size_t i = 0; i < decoded->size(); ++i) {
    const Bar& a = (*decoded)[i];
    const Bar& b = (*shipped)[i];
    ASSERT_EQ(a.time_us, b.time_us) << i;
    ASSERT_DOUBLE_EQ(a.open, b.open) << i;
    ASSERT_DOUBLE_EQ(a.high, b.high) << i;
    ASSERT_DOUBLE_EQ(a.low, b.low) << i;
    ASSERT_DOUBLE_EQ(a.close, b.close) << i;
    ASSERT_DOUBLE_EQ(a.volume, b.volume) << i;
  }
  EXPECT_EQ(CleanBars(*decoded).report.dropped(), 0);
}

}  // namespace
}  // namespace flashtick
