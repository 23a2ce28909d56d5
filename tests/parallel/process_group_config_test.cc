// ResolveProcessGroupConfig (research/parallel/process_group_config.h): torchrun's and
// Kubeflow PyTorchJob's variables, a Kubernetes Indexed Job's JOB_COMPLETION_INDEX as
// the rank, flags over the environment, and clear errors for bad values.
#include "research/parallel/process_group_config.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace flashtick {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](absl::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ProcessGroupConfig, DefaultsToOneProcess) {
  auto c = ResolveProcessGroupConfig({}, Env({}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 0);
  EXPECT_EQ(c->world_size, 1);
  EXPECT_EQ(c->master_addr, "127.0.0.1");
  EXPECT_EQ(c->master_port, 29500);
}

TEST(ProcessGroupConfig, ReadsTorchrunVariables) {
  auto c = ResolveProcessGroupConfig({}, Env({{"RANK", "3"},
                                              {"WORLD_SIZE", "4"},
                                              {"MASTER_ADDR", "job-master-0"},
                                              {"MASTER_PORT", "23456"},
                                              {"LOCAL_RANK", "1"}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 3);
  EXPECT_EQ(c->world_size, 4);
  EXPECT_EQ(c->local_rank, 1);
  EXPECT_EQ(c->master_addr, "job-master-0");
  EXPECT_EQ(c->master_port, 23456);
}

TEST(ProcessGroupConfig, IndexedJobCompletionIndexIsTheRankWithoutRank) {
  auto c = ResolveProcessGroupConfig({}, Env({{"JOB_COMPLETION_INDEX", "2"}, {"WORLD_SIZE", "4"}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 2);
  EXPECT_EQ(c->local_rank, 2);  // one process per pod: LOCAL_RANK defaults to the rank
  auto both = ResolveProcessGroupConfig(
      {}, Env({{"RANK", "1"}, {"JOB_COMPLETION_INDEX", "2"}, {"WORLD_SIZE", "4"}}));
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->rank, 1);  // RANK wins
}

TEST(ProcessGroupConfig, FlagsOverrideTheEnvironment) {
  ProcessGroupFlags f;
  f.rank = 0;
  f.world_size = 2;
  f.master_addr = "10.0.0.5";
  f.master_port = 0;
  auto c = ResolveProcessGroupConfig(
      f, Env({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "x"}, {"MASTER_PORT", "1"}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rank, 0);
  EXPECT_EQ(c->world_size, 2);
  EXPECT_EQ(c->master_addr, "10.0.0.5");
  EXPECT_EQ(c->master_port, 0);  // rank 0 may let the kernel pick
}

TEST(ProcessGroupConfig, RefusesBadValues) {
  auto bad = [](std::map<std::string, std::string> vars) {
    return ResolveProcessGroupConfig({}, Env(std::move(vars))).status();
  };
  absl::Status s = bad({{"RANK", "two"}, {"WORLD_SIZE", "4"}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("RANK='two'"), std::string::npos) << s;
  EXPECT_FALSE(bad({{"RANK", "4"}, {"WORLD_SIZE", "4"}}).ok());
  EXPECT_FALSE(bad({{"RANK", "-1"}, {"WORLD_SIZE", "4"}}).ok());
  EXPECT_FALSE(bad({{"WORLD_SIZE", "0"}}).ok());
  EXPECT_FALSE(bad({{"MASTER_PORT", "70000"}}).ok());
  s = bad({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "0"}});
  EXPECT_NE(s.message().find("rank 1 needs the port"), std::string::npos) << s;
}

}  // namespace
}  // namespace flashtick
