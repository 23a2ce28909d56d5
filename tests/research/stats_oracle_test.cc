// research/stats against an independent Python reference (tests/research/
// stats_oracle.py: scipy.stats, scipy.integrate.quad, itertools CSCV), run
// through FLASHTICK_PYTHON: moments, PSR, exact E[max], Φ⁻¹, DSR, PBO on random
// matrices (with duplicated columns for ties) and classification metrics.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/rng.h"
#include "research/stats/classification.h"
#include "research/stats/pbo.h"
#include "research/stats/sharpe.h"

namespace flashtick {
namespace {

using nlohmann::json;

std::vector<double> Series(Rng& rng, int n, int kind) {
  std::vector<double> x(n);
  for (double& v : x) {
    if (kind == 0) v = 0.001 + 0.01 * rng.Normal();
    if (kind == 1) v = 0.02 * (rng.Exponential() - 0.9);                          // right-skewed
    if (kind == 2) v = 0.005 - 0.03 * rng.Exponential() * (rng.Uniform() < 0.1);  // crash-prone
    if (kind == 3) v = 0.01 * rng.Normal() * (rng.Uniform() < 0.2 ? 4 : 1);       // fat tails
  }
  return x;
}

TEST(StatsOracleTest, AgreesWithScipy) {
  Rng rng(31337);
  json req;
  std::vector<std::vector<double>> series;
  for (int kind = 0; kind < 4; ++kind) series.push_back(Series(rng, 250 + 50 * kind, kind));
  req["series"] = series;
  const std::vector<double> sr_star = {0.0, 0.05, -0.02};
  req["sr_star"] = sr_star;
  const std::vector<int64_t> emax_n = {2, 3, 5, 10, 100, 1000, 1000000};
  req["emax_n"] = emax_n;
  const std::vector<double> ppf_p = {1e-12, 1e-5, 0.01,    0.02425, 0.3,
                                     0.5,   0.77, 0.97575, 0.999,   1 - 1e-9};
  req["ppf_p"] = ppf_p;
  std::vector<double> trials;
  for (int i = 0; i < 12; ++i) trials.push_back(0.05 * rng.Normal());
  trials.push_back(SharpeRatio(series[0]));
  req["dsr"] = {{"returns", series[0]}, {"trial_sharpes", trials}};
  struct PboCase {
    std::vector<std::vector<double>> m;
    int blocks;
  };
  std::vector<PboCase> pbo_cases;
  for (int c = 0; c < 6; ++c) {
    // S = 8, 10, 12 (the Python CSCV takes ~20 s at S = 16; stats_test counts C(16, 8)).
    const int t = 30 + 7 * c, n = 2 + c % 4, s = 8 + 2 * (c % 3);
    std::vector<std::vector<double>> m(t, std::vector<double>(n));
    for (int i = 0; i < t; ++i) {
      for (int j = 0; j < n; ++j) m[i][j] = 0.001 * j * (c % 3) + rng.Normal();
      if (c >= 4) m[i][n - 1] = m[i][0];  // a duplicated column: exact ties
    }
    pbo_cases.push_back({m, s});
    req["pbo"].push_back({{"matrix", m}, {"blocks", s}});
  }
  std::vector<std::vector<int8_t>> labels;
  std::vector<std::vector<double>> probs;
  for (int c = 0; c < 3; ++c) {
    std::vector<int8_t> y;
    std::vector<double> p;
    for (int i = 0; i < 400; ++i) {
      y.push_back(i % 37 == 0 ? int8_t{kNoLabel} : static_cast<int8_t>(rng.Below(c == 2 ? 2 : 3)));
      double a = rng.Uniform(), b = rng.Uniform(), d = rng.Uniform();
      if (i % 11 == 0) b = a;           // ties in argmax
      if (c == 1 && i % 5 == 0) d = 0;  // zero probability of the true class sometimes
      const double s = a + b + d;
      p.insert(p.end(), {a / s, b / s, d / s});
    }
    labels.push_back(y);
    probs.push_back(p);
    std::vector<int> yi(y.begin(), y.end());
    req["classify"].push_back({{"labels", yi}, {"probs", p}});
  }

  char dir_tmpl[] = "/tmp/flashtick_stats_XXXXXX";
  ASSERT_NE(mkdtemp(dir_tmpl), nullptr);
  const std::string dir = dir_tmpl, in = dir + "/req.json", out = dir + "/resp.json";
  std::ofstream(in) << req.dump();
  const std::string cmd = std::string(FLASHTICK_PYTHON) + " " + FLASHTICK_SOURCE_DIR +
                          "/tests/research/stats_oracle.py " + in + " " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0)
      << "oracle failed: " << cmd << " (the venv needs numpy and scipy: scripts/setup.sh)";
  std::ifstream rs(out);
  const json resp = json::parse(rs);
  std::filesystem::remove_all(dir);

  for (size_t i = 0; i < series.size(); ++i) {
    const Moments m = ComputeMoments(series[i]);
    const json& want = resp["moments"][i];
    EXPECT_NEAR(m.mean, want["mean"].get<double>(), 1e-15);
    EXPECT_NEAR(m.stddev, want["sd"].get<double>(), 1e-14);
    EXPECT_NEAR(m.sharpe, want["sharpe"].get<double>(), 1e-12);
    EXPECT_NEAR(m.skew, want["skew"].get<double>(), 1e-11) << i;
    EXPECT_NEAR(m.kurtosis, want["kurt"].get<double>(), 1e-10) << i;
    for (size_t j = 0; j < sr_star.size(); ++j) {
      auto psr = ProbabilisticSharpe(series[i], sr_star[j]);
      ASSERT_TRUE(psr.ok()) << psr.status();
      EXPECT_NEAR(*psr, resp["psr"][i * sr_star.size() + j].get<double>(), 1e-12) << i << "," << j;
    }
  }
  for (size_t i = 0; i < emax_n.size(); ++i) {
    EXPECT_NEAR(*ExpectedMaxOfNormals(emax_n[i]), resp["emax"][i].get<double>(), 1e-9)
        << "N=" << emax_n[i];
  }
  for (size_t i = 0; i < ppf_p.size(); ++i) {
    const double want = resp["ppf"][i].get<double>();
    EXPECT_NEAR(NormalQuantile(ppf_p[i]), want, 1e-13 * std::max(1.0, std::fabs(want))) << ppf_p[i];
  }
  auto dsr = DeflatedSharpeRatio(series[0], trials);
  ASSERT_TRUE(dsr.ok());
  EXPECT_NEAR(dsr->sr0, resp["dsr"]["sr0"].get<double>(), 1e-10);
  EXPECT_NEAR(dsr->dsr, resp["dsr"]["dsr"].get<double>(), 1e-9);
  std::cout << "oracle DSR " << dsr->dsr << " SR0 " << dsr->sr0 << "\n";
  for (size_t c = 0; c < pbo_cases.size(); ++c) {
    auto r = ProbabilityOfBacktestOverfitting(pbo_cases[c].m, pbo_cases[c].blocks);
    ASSERT_TRUE(r.ok()) << r.status();
    const json& want = resp["pbo"][c];
    EXPECT_EQ(r->combinations, want["combinations"].get<int64_t>());
    EXPECT_EQ(r->median_ties, want["median_ties"].get<int64_t>()) << "case " << c;
    EXPECT_DOUBLE_EQ(r->pbo, want["pbo"].get<double>()) << "case " << c;
    std::cout << "oracle PBO case " << c << ": " << r->pbo << " (" << r->median_ties
              << " median ties)\n";
  }
  for (size_t c = 0; c < labels.size(); ++c) {
    auto m = Classify(labels[c], probs[c]);
    ASSERT_TRUE(m.ok()) << m.status();
    const json& want = resp["classify"][c];
    EXPECT_DOUBLE_EQ(m->accuracy, want["accuracy"].get<double>());
    EXPECT_NEAR(m->macro_f1, want["macro_f1"].get<double>(), 1e-15);
    EXPECT_NEAR(m->log_loss, want["log_loss"].get<double>(), 1e-12);
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b)
        EXPECT_EQ(m->confusion[a][b], want["confusion"][a][b].get<int64_t>());
    }
  }
}

}  // namespace
}  // namespace flashtick
