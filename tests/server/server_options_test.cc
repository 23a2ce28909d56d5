// flashtickd's flags: --serve-stream-priority parses, defaults to high, and a bad value
// is refused by both CLI11 (the flag) and ServerOptions::Validate (options built in code).
#include "server/server_options.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace flashtick {
namespace {

// Parses `args` (without the program name) into `options`; false on a CLI11 error.
bool ParseFlags(std::vector<std::string> args, ServerOptions* options) {
  CLI::App app("flashtickd");
  AddServerFlags(&app, options);
  std::vector<const char*> argv = {"flashtickd"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return false;
  }
  return true;
}

TEST(ServerOptionsTest, ServeStreamPriorityDefaultsToHigh) {
  ServerOptions options;
  ASSERT_TRUE(ParseFlags({}, &options));
  EXPECT_EQ(options.serve_stream_priority, "high");
  EXPECT_TRUE(options.Validate().ok());
}

TEST(ServerOptionsTest, ServeStreamPriorityNormalParses) {
  ServerOptions options;
  ASSERT_TRUE(ParseFlags({"--serve-stream-priority", "normal"}, &options));
  EXPECT_EQ(options.serve_stream_priority, "normal");
  EXPECT_TRUE(options.Validate().ok());
}

TEST(ServerOptionsTest, ServeStreamPriorityRejectsOtherValues) {
  ServerOptions options;
  EXPECT_FALSE(ParseFlags({"--serve-stream-priority", "urgent"}, &options));
  ServerOptions in_code;
  in_code.serve_stream_priority = "urgent";
  absl::Status status = in_code.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("--serve-stream-priority"), std::string::npos) << status;
}

}  // namespace
}  // namespace flashtick
