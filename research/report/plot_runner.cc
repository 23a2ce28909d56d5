// RunPlotScript (see plot_runner.h): posix_spawnp with the child's stdout and
// stderr on one pipe; the parent reads it to EOF, then waits.
// FLASHTICK_DATA_FROM_BIN (research/CMakeLists.txt): the install tree's
// <datadir>/flashtick relative to its <bindir>, "../share/flashtick" by default.
#include "research/report/plot_runner.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#ifndef FLASHTICK_DATA_FROM_BIN
#define FLASHTICK_DATA_FROM_BIN "../share/flashtick"
#endif

extern char** environ;

namespace flashtick {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxOutput = 4000;     // characters of the child's output kept
constexpr int kNoMatplotlib = 3;        // plot_report.py's exit code for it

// Runs argv; returns the exit code (−1 when it could not start or died on a signal).
int Run(const std::vector<std::string>& argv, std::string* output) {
  int fds[2];
  if (pipe(fds) != 0) {
    *output = "pipe failed";
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    *output = absl::StrCat("cannot start ", argv[0], ": ", strerror(rc));
    return -1;
  }
  char buf[4096];
  ssize_t got;
  while ((got = read(fds[0], buf, sizeof(buf))) > 0) {
    if (output->size() < kMaxOutput) output->append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

PlotResult RunPlotScript(const std::string& python, const std::string& script,
                         const std::string& report_json, const std::string& out_dir) {
  PlotResult r;
  if (python.empty()) {
    r.note = "plots not drawn: no Python configured (flashtickd --report-python)";
    return r;
  }
  if (script.empty() || !fs::exists(script)) {
    r.note = absl::StrCat("plots not drawn: plot script '", script,
                          "' not found (flashtickd --plot-script)");
    return r;
  }
  std::string output;
  const int rc = Run({python, script, report_json, out_dir}, &output);
  if (rc == kNoMatplotlib) {
    r.note = absl::StrCat("plots not drawn: ", python, " has no matplotlib (",
                          absl::StripAsciiWhitespace(output), ")");
    return r;
  }
  if (rc != 0) {
    r.note = absl::StrCat("plots not drawn: ", python, " ", script, " exited with ", rc, ": ",
                          absl::StripAsciiWhitespace(output));
    return r;
  }
  // The script prints one "wrote <name>" line per file.
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::ConsumePrefix(&line, "wrote ")) {
      const std::string name(absl::StripAsciiWhitespace(line));
      if (fs::exists(fs::path(out_dir) / name)) r.files.push_back(name);
    }
  }
  if (r.files.empty()) r.note = "plots not drawn: the plot script wrote no file";
  return r;
}

std::string DefaultPlotScript() {
  if (const char* env = std::getenv("FLASHTICK_PLOT_SCRIPT"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path dir = exe.parent_path();
  std::vector<fs::path> candidates = {dir / "plot_report.py",
                                      dir / FLASHTICK_DATA_FROM_BIN / "plot_report.py"};
  fs::path up = dir;
  for (int level = 1; level <= 3 && up.has_parent_path() && up != up.root_path(); ++level) {
    up = up.parent_path();
    candidates.push_back(up / "share" / "flashtick" / "plot_report.py");
  }
  for (const fs::path& p : candidates) {
    if (fs::exists(p, ec)) return p.lexically_normal().string();
  }
  return "";
}

}  // namespace flashtick
