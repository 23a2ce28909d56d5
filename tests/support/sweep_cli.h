// `flashtick sweep <args...>` run in the test's process as client/main.cc runs it,
// with stdout and stderr captured: the CLI tests' one harness.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "client/commands/sweep_command.h"

namespace flashtick {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline CliResult RunSweepCli(const ClientOptions& options, std::vector<std::string> args) {
  args.insert(args.begin(), {"flashtick", "sweep"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  CliResult r;
  r.exit_code = 0;
  CLI::App app{"flashtick"};
  app.require_subcommand(1);
  AddSweepCommand(&app, &options, &r.exit_code);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    r.exit_code = app.exit(e);
  }
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

}  // namespace flashtick
