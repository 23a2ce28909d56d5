// `flashtick sweep list`: the server's experiments, newest first, one line each
// (id, name, state, arms, when, verdict), following page tokens up to --limit.
#include <cstdio>
#include <ctime>
#include <string>

#include <CLI/CLI.hpp>

#include "client/commands/sweep_client.h"
#include "client/commands/sweep_command.h"

namespace flashtick {
namespace {

struct ListArgs {
  std::string state;
  int limit = 20;
};

std::string When(const google::protobuf::Timestamp& t) {
  const std::time_t s = static_cast<std::time_t>(t.seconds());
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

int RunList(const ClientOptions& options, const ListArgs& args) {
  v1::ListExperimentsRequest request;
  if (!args.state.empty()) {
    v1::ExperimentState state;
    std::string upper = "EXPERIMENT_STATE_";
    for (char c : args.state) upper += static_cast<char>(std::toupper(c));
    if (!v1::ExperimentState_Parse(upper, &state)) {
      std::fprintf(stderr, "sweep list: --state must be queued, running, succeeded, failed or "
                           "cancelled\n");
      return 2;
    }
    request.set_state_filter(state);
  }
  SweepClient client(options);
  int shown = 0;
  std::printf("%-12s %-16s %-10s %4s %-21s %s\n", "id", "name", "state", "arms", "created",
              "verdict");
  do {
    request.set_page_size(std::min(args.limit - shown, 100));
    auto page = client.List(request);
    if (!page.ok()) {
      std::fprintf(stderr, "%s\n", page.status().ToString().c_str());
      return 2;
    }
    for (const v1::Experiment& x : page->experiments()) {
      std::string verdict = x.state() == v1::EXPERIMENT_STATE_SUCCEEDED
                                ? (x.verdict().passed() ? "PASS" : "FAIL")
                                : "";
      std::printf("%-12s %-16s %-10s %4d %-21s %s\n", x.id().c_str(), x.config().name().c_str(),
                  StateName(x.state()).c_str(), x.arms_size(), When(x.created_at()).c_str(),
                  verdict.c_str());
      ++shown;
    }
    request.set_page_token(page->next_page_token());
  } while (!request.page_token().empty() && shown < args.limit);
  if (shown == 0) std::printf("(no experiments)\n");
  return 0;
}

}  // namespace

void AddSweepList(CLI::App* sweep, const ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<ListArgs>();
  CLI::App* cmd = sweep->add_subcommand("list", "The server's experiments, newest first.");
  cmd->add_option("--state", args->state, "only this state (queued, running, succeeded, ...)");
  cmd->add_option("--limit", args->limit, "at most this many")->check(CLI::Range(1, 100000));
  cmd->callback([options, exit_code, args] { *exit_code = RunList(*options, *args); });
}

}  // namespace flashtick
