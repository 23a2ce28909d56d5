// The sweep end to end on real prices: USD/CHF half-hourly quotes 1996–2001
// (Debian r-cran-timeseries, fetched and converted at test time by
// tests/data/r_lazyload_to_csv.py; SKIPPED with the reason when apt cannot fetch).
// Sessions are whole days of 48 half-hour steps on Zurich time (as in
// tests/research/real_data_test.cc); label horizon k = 4 steps (2 hours); arms
// N = 12, 48, 192 steps (6 hours, a day, four days), monthly test blocks after a
// year of training. The expected answer is an honest "no": half-hourly FX is too
// coarse for long context to help. The test checks that the sweep runs, every arm
// is scored on the same test days, the gate gives a verdict and the report is
// complete; it prints the figures. With FLASHTICK_SWEEP_REPORT_OUT=DIR set it
// copies the report (JSON, Markdown, plots) there (docs/sweeps/usdchf/ holds the
// committed copy).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "research/report/plot_runner.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

TEST(SweepUsdChf, RunsEndToEndOnRealPrices) {
  const std::string dir =
      ::testing::TempDir() + "/sweep_usdchf_" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/data");
  const std::string cmd = std::string(FLASHTICK_PYTHON) + " " + FLASHTICK_SOURCE_DIR +
                          "/tests/data/r_lazyload_to_csv.py --out " + dir + "/data > " + dir +
                          "/convert.log 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream log;
  log << std::ifstream(dir + "/convert.log").rdbuf();
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) GTEST_SKIP() << "real data unavailable: " << log.str();
  ASSERT_EQ(rc, 0) << "converter failed: " << log.str();

  const std::string json = nlohmann::json{
      {"name", "usdchf"},
      {"contexts", {12, 48, 192}},
      {"model", {{"width", 16}, {"layers", 2}, {"heads", 2}, {"kv_heads", 2}, {"mlp_ratio", 2}}},
      {"optimizer",
       {{"learning_rate", 0.003}, {"warmup_steps", 10}, {"tokens_per_step", 1536},
        {"weight_decay", 0.0}}},
      {"training",
       {{"first_fold_epochs", 3}, {"epochs_per_fold", 1}, {"checkpoint_every_steps", 200}}},
      {"data",
       {{"csv",
         {{"paths", {dir + "/data/usdchf.csv"}},
          {"format", "bars"},
          {"instrument", "USDCHF"},
          {"session",
           {{"open_second", 0}, {"step_seconds", 1800}, {"steps", 48},
            {"clock_shift_seconds", 7200}, {"min_rows_in_session", 24}}}}}}},
      {"labels", {{"horizon", 4}}},
      {"walk_forward", {{"train_days", 250}, {"test_days", 21}}},
      {"cost_bps", 1.0},
      {"precision_check", {{"enabled", true}, {"max_windows", 16}}},
      {"device", "cpu"}}
                               .dump();
  auto config = ParseSweepConfig(json);
  ASSERT_TRUE(config.ok()) << config.status();
  SweepEngineOptions o;
  o.dir = dir + "/sweep";
  o.device = "cpu";
  o.cpu_threads = 2;
  o.python = FLASHTICK_PYTHON;
  o.plot_script = DefaultPlotScript();
  auto out = SweepEngine::Run(*config, o, {});
  ASSERT_TRUE(out.ok()) << out.status();
  std::printf("data: %s\n", out->data_description.c_str());
  ASSERT_EQ(out->arms.size(), 3u);
  EXPECT_EQ(out->days, 1302);
  // Monthly blocks after 250 sessions: (1302 − 250) / 21 = 50 folds of 21 test days.
  EXPECT_EQ(out->test_dates.size(), 50u * 21u);
  for (const ArmResult& a : out->arms) {
    EXPECT_EQ(a.state, ArmState::kDone);
    EXPECT_EQ(a.days.size(), out->test_dates.size());
    auto m = a.Pooled();
    ASSERT_TRUE(m.ok());
    std::printf("arm %-4s N=%-4lld acc %.4f macro-F1 %.4f log-loss %.4f daily Sharpe %+.4f "
                "%.2f s/epoch %.0f tok/s\n",
                a.arm_id.c_str(), static_cast<long long>(a.context), m->accuracy, m->macro_f1,
                m->log_loss, a.Sharpe(), a.seconds_per_epoch(), a.tokens_per_second());
  }
  ASSERT_TRUE(out->verdict.has_value()) << out->verdict_error;
  std::printf("verdict: %s\n", out->verdict->Summary().c_str());
  EXPECT_TRUE(out->precision.ran);
  EXPECT_GT(out->precision.positions, 0);
  EXPECT_LT(out->precision.max_rel_logit_error, 1e-4) << "float32 vs float64 on the CPU";
  std::printf("precision: max rel logit err %.3g, %lld/%lld flips (%s)\n",
              out->precision.max_rel_logit_error, static_cast<long long>(out->precision.flips),
              static_cast<long long>(out->precision.positions), out->precision.note.c_str());
  EXPECT_TRUE(out->plots_note.empty()) << out->plots_note;
  for (const char* f : {"report.json", "report.md", "config.json"}) {
    EXPECT_TRUE(fs::exists(o.dir + "/" + f)) << f;
  }
  if (const char* copy = std::getenv("FLASHTICK_SWEEP_REPORT_OUT"); copy != nullptr && *copy) {
    fs::create_directories(copy);
    for (const auto& e : fs::directory_iterator(o.dir)) {
      if (e.is_regular_file()) {
        fs::copy_file(e.path(), fs::path(copy) / e.path().filename(),
                      fs::copy_options::overwrite_existing);
      }
    }
    std::printf("report copied to %s\n", copy);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace flashtick
