// `flashtick sweep submit` against an in-process flashtickd: the CLI keeps no copy of
// the sweep parser or the presets (ARCHITECTURE.md: the client links neither
// research/ nor the model), so what a user sees of a bad preset or configuration is
// the server's INVALID_ARGUMENT, and it must carry the same information the local
// check gave: the unknown preset with the names that exist, every bad field by name,
// exit code 2, nothing created. --print-config prints the server's full
// configuration, the same JSON the research parser makes of the preset.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "client/commands/sweep_client.h"
#include "client/commands/sweep_command.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_presets.h"
#include "tests/support/in_process_server.h"
#include "tests/support/sweep_cli.h"

namespace flashtick {
namespace {

class SweepSubmitCliTest : public InProcessServerTest {
 protected:
  void SetUp() override {
    InProcessServerTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(StartServer(BaseOptions()));
    options_.server = Address();
    options_.timeout_seconds = 60;
  }

  CliResult Sweep(std::vector<std::string> args) { return RunSweepCli(options_, std::move(args)); }

  int ExperimentCount() {
    SweepClient client(options_);
    auto list = client.List(v1::ListExperimentsRequest());
    EXPECT_TRUE(list.ok()) << list.status();
    return list.ok() ? list->experiments_size() : -1;
  }

  ClientOptions options_;
};

TEST_F(SweepSubmitCliTest, UnknownPresetIsRefusedNamingThePresetsThatExist) {
  const CliResult r = Sweep({"submit", "--preset", "no-such"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("INVALID_ARGUMENT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no-such"), std::string::npos) << r.err;
  for (const std::string& name : SweepPresetNames()) {
    EXPECT_NE(r.err.find(name), std::string::npos) << name << " not in: " << r.err;
  }
  const CliResult p = Sweep({"submit", "--preset", "no-such", "--print-config"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("INVALID_ARGUMENT"), std::string::npos) << p.err;
  EXPECT_EQ(ExperimentCount(), 0);
}

TEST_F(SweepSubmitCliTest, BadConfigIsRefusedNamingEveryBadField) {
  const std::string bad = WriteFile("bad.json", R"({"contexts": [8, 8], "cost_bps": -1})");
  for (const bool print : {false, true}) {
    std::vector<std::string> args = {"submit", "--config", bad};
    if (print) args.push_back("--print-config");
    const CliResult r = Sweep(args);
    EXPECT_EQ(r.exit_code, 2) << "print-config " << print;
    EXPECT_NE(r.err.find("INVALID_ARGUMENT"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("contexts must be distinct"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("cost_bps must be a number"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const CliResult syntax = Sweep({"submit", "--config", WriteFile("syntax.json", "{\"name\": ")});
  EXPECT_EQ(syntax.exit_code, 2);
  EXPECT_NE(syntax.err.find("INVALID_ARGUMENT"), std::string::npos) << syntax.err;
  const CliResult missing = Sweep({"submit", "--config", root_ + "/absent.json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("absent.json"), std::string::npos) << missing.err;
  EXPECT_EQ(ExperimentCount(), 0);
}

TEST_F(SweepSubmitCliTest, PrintConfigIsTheFullConfigurationAndSubmitsNothing) {
  for (const std::string& name : {std::string("demo"), std::string("planted")}) {
    auto text = SweepPresetJson(name);
    ASSERT_TRUE(text.ok()) << text.status();
    auto config = ParseSweepConfig(*text);
    ASSERT_TRUE(config.ok()) << config.status();
    const CliResult r = Sweep({"submit", "--preset", name, "--print-config"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, SweepConfigToJson(*config) + "\n");
    // The printed file, submitted back with --print-config, resolves to itself.
    const CliResult again =
        Sweep({"submit", "--config", WriteFile(name + ".json", r.out), "--print-config"});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, r.out);
  }
  EXPECT_EQ(ExperimentCount(), 0);
}

}  // namespace
}  // namespace flashtick
