// Sweep reports, written into the experiment's directory:
//   report.json  for machines: the configuration, data, per-arm cost (with the mean
//                plain step and Sophia-H Hessian-refresh step) and benefit
//                (per test day and pooled), lag-family event accuracy, loss curves,
//                the verdict with every gate's figures, the precision check
//   *.png        cost vs N, benefit vs N, per-day returns, loss curves, drawn from
//                report.json by plot_report.py (matplotlib) when a Python with
//                matplotlib is available; otherwise report.md says why not
//   report.md    for people: the verdict first and plainly, then the figures
// SweepReportJson is pure (outcome in, JSON out); MarkdownReport renders the JSON,
// so a stored report.json can be re-rendered without rerunning anything.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {

constexpr char kSweepReportFormat[] = "flashtick-sweep-report";
constexpr int kSweepReportVersion = 1;

nlohmann::json SweepReportJson(const SweepOutcome& outcome);

// Writes report.json, the plots and report.md under dir; fills outcome->report_files
// and outcome->plots_note. Missing plots are not an error (the report says so).
absl::Status WriteSweepReport(const std::string& dir, const std::string& python,
                              const std::string& plot_script, SweepOutcome* outcome);

}  // namespace flashtick
