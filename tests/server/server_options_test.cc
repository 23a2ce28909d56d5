// flashtickd's flags: --serve-stream-priority parses, defaults to high, and a bad value
// is refused by both CLI11 (the flag) and ServerOptions::Validate (options built in code);
// --k8s-rendezvous-port (a multi-pod arm's MASTER_PORT, docs/deploy.md) defaults to
// 29500 and must be a TCP port; --pad-length-to is off (1) unless asked and refuses 0;
// --max-pinned-staging-mb is 256 unless asked, 0 turns it off, negatives are refused.
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

TEST(ServerOptionsTest, DecodeGraphsIsOffUnlessAsked) {
  ServerOptions options;
  ASSERT_TRUE(ParseFlags({}, &options));
  EXPECT_FALSE(options.decode_graphs);
  ASSERT_TRUE(ParseFlags({"--decode-graphs"}, &options));
  EXPECT_TRUE(options.decode_graphs);
  ServerOptions off;
  ASSERT_TRUE(ParseFlags({"--decode-graphs", "--no-decode-graphs"}, &off));
  EXPECT_FALSE(off.decode_graphs);
}

TEST(ServerOptionsTest, PadLengthToDefaultsToOffAndRefusesZero) {
  ServerOptions options;
  ASSERT_TRUE(ParseFlags({}, &options));
  EXPECT_EQ(options.pad_length_to, 1);
  ASSERT_TRUE(ParseFlags({"--pad-length-to", "1024"}, &options));
  EXPECT_EQ(options.pad_length_to, 1024);
  EXPECT_TRUE(options.Validate().ok());
  options.pad_length_to = 0;
  const absl::Status status = options.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("--pad-length-to"), std::string::npos) << status;
}

TEST(ServerOptionsTest, MaxPinnedStagingMbDefaultsTo256AndRefusesNegatives) {
  ServerOptions options;
  ASSERT_TRUE(ParseFlags({}, &options));
  EXPECT_EQ(options.max_pinned_staging_mb, 256);
  ASSERT_TRUE(ParseFlags({"--max-pinned-staging-mb", "0"}, &options));  // off
  EXPECT_EQ(options.max_pinned_staging_mb, 0);
  EXPECT_TRUE(options.Validate().ok());
  options.max_pinned_staging_mb = -1;
  const absl::Status status = options.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("--max-pinned-staging-mb"), std::string::npos) << status;
}

TEST(ServerOptionsTest, WarmUpNeedsPadLengthTo) {
  ServerOptions options;
  ASSERT_TRUE(ParseFlags({"--warm-up"}, &options));
  EXPECT_TRUE(options.warm_up);
  const absl::Status status = options.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("--pad-length-to"), std::string::npos) << status;
  ServerOptions padded;
  ASSERT_TRUE(ParseFlags({"--warm-up", "--pad-length-to", "1024"}, &padded));
  EXPECT_TRUE(padded.Validate().ok());
}

TEST(ServerOptionsTest, K8sRendezvousPort) {
  ServerOptions options;
  ASSERT_TRUE(ParseFlags({}, &options));
  EXPECT_EQ(options.k8s_rendezvous_port, 29500);
  ASSERT_TRUE(ParseFlags({"--k8s-rendezvous-port", "29611"}, &options));
  EXPECT_EQ(options.k8s_rendezvous_port, 29611);
  ServerOptions k8s;
  k8s.sweep_arm_runner = "kubernetes";
  k8s.experiment_dir = "/var/lib/flashtick/experiments";
  k8s.k8s_image = "flashtick:ci";
  k8s.k8s_pvc = "flashtick-store";
  EXPECT_TRUE(k8s.ValidateK8s().ok()) << k8s.ValidateK8s();
  for (int bad : {0, 65536}) {
    k8s.k8s_rendezvous_port = bad;
    const absl::Status status = k8s.ValidateK8s();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("--k8s-rendezvous-port"), std::string::npos) << status;
  }
}

TEST(ServerOptionsTest, K8sNodeSelector) {
  ServerOptions options;
  ASSERT_TRUE(ParseFlags({"--k8s-node-selector", "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB",
                          "--k8s-node-selector", "pool=train"},
                         &options));
  ASSERT_EQ(options.k8s_node_selector.size(), 2u);
  EXPECT_EQ(options.k8s_node_selector[1], "pool=train");
  options.sweep_arm_runner = "kubernetes";
  options.experiment_dir = "/var/lib/flashtick/experiments";
  options.k8s_image = "flashtick:ci";
  options.k8s_pvc = "flashtick-store";
  EXPECT_TRUE(options.ValidateK8s().ok()) << options.ValidateK8s();
  options.k8s_node_selector = {""};  // a manifest's empty $(VAR): no label, not an error
  EXPECT_TRUE(options.ValidateK8s().ok()) << options.ValidateK8s();
  // No key, no '=', a value longer than a label value's 63 characters.
  for (const std::string& bad : {std::string("=a100"), std::string("no-value-sign"),
                                 "k=" + std::string(64, 'v')}) {
    options.k8s_node_selector = {bad};
    const absl::Status status = options.ValidateK8s();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("--k8s-node-selector"), std::string::npos) << status;
  }
}

}  // namespace
}  // namespace flashtick
