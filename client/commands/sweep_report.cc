// `flashtick sweep report ID`: prints the report (JSON for machines, or Markdown
// for people with --format markdown); with --out DIR also writes it and every file
// beside it (plots, configuration) into DIR, so the Markdown's images resolve.
#include <cstdio>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "client/commands/sweep_client.h"
#include "client/commands/sweep_command.h"
#include "common/file_io.h"

namespace flashtick {
namespace {

struct ReportArgs {
  std::string id, format = "json", out;
};

int RunReport(const ClientOptions& options, const ReportArgs& args) {
  v1::GetReportRequest request;
  request.set_id(args.id);
  request.set_format(args.format == "markdown" ? v1::REPORT_FORMAT_MARKDOWN
                                               : v1::REPORT_FORMAT_JSON);
  request.set_include_files(!args.out.empty());
  SweepClient client(options);
  auto report = client.Report(request);
  if (!report.ok()) {
    std::fprintf(stderr, "%s\n", report.status().ToString().c_str());
    return 2;
  }
  if (args.out.empty()) {
    std::fwrite(report->content().data(), 1, report->content().size(), stdout);
    if (!report->content().empty() && report->content().back() != '\n') std::printf("\n");
    return 0;
  }
  if (absl::Status s = MakeDirs(args.out); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  for (const v1::ReportFile& f : report->files()) {
    // Names come from the server's directory listing; keep only the base name.
    const std::string name = std::filesystem::path(f.name()).filename().string();
    if (name.empty() || name == "." || name == "..") continue;
    if (absl::Status s = WriteFileAtomic(args.out + "/" + name, f.content()); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 2;
    }
    std::printf("wrote %s/%s (%zu bytes)\n", args.out.c_str(), name.c_str(), f.content().size());
  }
  std::printf("verdict: %s\n", report->verdict().summary().c_str());
  return 0;
}

}  // namespace

void AddSweepReport(CLI::App* sweep, const ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = sweep->add_subcommand("report", "Print or download an experiment's report.");
  cmd->add_option("id", args->id, "experiment id")->required();
  cmd->add_option("--format", args->format, "json or markdown")
      ->check(CLI::IsMember({"json", "markdown"}));
  cmd->add_option("--out", args->out, "write the report, plots and configuration into this dir");
  cmd->callback([options, exit_code, args] { *exit_code = RunReport(*options, *args); });
}

}  // namespace flashtick
