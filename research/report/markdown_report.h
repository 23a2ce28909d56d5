// MarkdownReport: report.md from report.json (sweep_report.h), for a person. The
// verdict comes first and in plain words — PASS only when the longest context is
// best out of sample, its Deflated Sharpe clears the bar and PBO is low enough —
// then cost and benefit per arm, event accuracy per lag family on planted data,
// the gate's figures, the precision check, the plots (or why there are none) and
// the method. Pure: JSON in, text out.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace flashtick {

std::string MarkdownReport(const nlohmann::json& report);

}  // namespace flashtick
