// InProcessServerTest (see in_process_server.h).
#include "tests/support/in_process_server.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace flashtick {

std::string FreshTestRoot() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "_" + std::to_string(getpid()) +
                     "_" + info->name();
  std::replace(name.begin(), name.end(), '/', '_');  // parameterised names
  const std::string root = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  return root;
}

ServerOptions InProcessServerOptions(const std::string& root) {
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.metrics_port = -1;
  o.model_repository = root + "/models";
  o.device = "cpu";
  o.threads = 1;
  o.experiment_dir = root + "/experiments";
  o.report_python = "";
  o.shutdown_grace_seconds = 1;
  return o;
}

void InProcessServerTest::SetUp() {
  root_ = FreshTestRoot();
  std::filesystem::create_directories(root_ + "/models");
}

void InProcessServerTest::TearDown() {
  StopServer();
  if (!HasFailure()) std::filesystem::remove_all(root_);
}

void InProcessServerTest::StartServer(const ServerOptions& options,
                                      const FlashtickServer::ExperimentSeams& seams) {
  auto s = FlashtickServer::Start(options, seams);
  ASSERT_TRUE(s.ok()) << s.status();
  server_ = std::move(*s);
}

void InProcessServerTest::StopServer() {
  if (server_) server_->Shutdown();
  server_.reset();
}

std::shared_ptr<grpc::Channel> InProcessServerTest::Channel() const {
  return grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials());
}

std::string InProcessServerTest::WriteFile(const std::string& name,
                                           const std::string& text) const {
  const std::string path = root_ + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace flashtick
