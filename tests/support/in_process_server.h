// InProcessServerTest: the shared fixture of the tests that run flashtickd in their
// own process and talk to it over a real gRPC channel on the loopback address.
// Each test gets a fresh folder root_ (with an empty models/ repository); the test
// takes BaseOptions(), changes what it exercises, and calls StartServer(). TearDown
// shuts the server down and removes root_, unless the test failed (then the folder
// is kept for a look).
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/flashtick_server.h"

namespace flashtick {

// A new, empty folder for the running test: TempDir()/<suite>_<pid>_<test>.
std::string FreshTestRoot();

// The options an in-process flashtickd under `root` starts from: 127.0.0.1:0 (a free
// port, FlashtickServer::grpc_port() tells which), no metrics port, the model
// repository root/models, the CPU backend with one thread, the Experiments service
// on root/experiments, no report plots, one second to drain at shutdown.
ServerOptions InProcessServerOptions(const std::string& root);

class InProcessServerTest : public ::testing::Test {
 protected:
  void SetUp() override;     // root_ = FreshTestRoot(), with root_/models
  void TearDown() override;  // the server shut down; root_ removed unless the test failed

  ServerOptions BaseOptions() const { return InProcessServerOptions(root_); }
  // Starts server_ (a failure fails the test: callers follow with ASSERT_NO_FATAL_FAILURE
  // or check server_ where it matters).
  void StartServer(const ServerOptions& options,
                   const FlashtickServer::ExperimentSeams& seams = {});
  // Shuts server_ down (graceful, as on SIGTERM) and forgets it.
  void StopServer();

  std::string Address() const { return "127.0.0.1:" + std::to_string(server_->grpc_port()); }
  // A plaintext channel to the server.
  std::shared_ptr<grpc::Channel> Channel() const;
  // A file holding `text` under root_; returns its path.
  std::string WriteFile(const std::string& name, const std::string& text) const;

  std::string root_;
  std::unique_ptr<FlashtickServer> server_;
};

}  // namespace flashtick
