// common/file_io: atomic writes, their temporary-file names, and the clean-up of the
// temporaries a killed writer left (crash safety, docs/reliability.md).
#include "common/file_io.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / absl::StrCat(name, "-", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void Touch(const fs::path& path) { std::ofstream(path) << "partial"; }

// The pid of a process that has exited and been reaped: a writer killed mid-write.
int64_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(FileIo, AtomicWriteReplacesAndLeavesNoTemporary) {
  const std::string dir = FreshDir("atomic");
  const std::string path = dir + "/state.json";
  ASSERT_TRUE(WriteFileAtomic(path, "one").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "two").ok());
  EXPECT_EQ(*ReadFileToString(path), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(FileIo, TemporaryNamesRoundTrip) {
  const std::string tmp = AtomicWriteTempName("/x/report.md");
  std::string target;
  int64_t pid = 0;
  ASSERT_TRUE(ParseAtomicWriteTempName(fs::path(tmp).filename().string(), &target, &pid));
  EXPECT_EQ(target, "report.md");
  EXPECT_EQ(pid, ::getpid());
  EXPECT_FALSE(ParseAtomicWriteTempName("report.md", &target, &pid));
  EXPECT_FALSE(ParseAtomicWriteTempName("report.md.tmp.12", &target, &pid));
  EXPECT_FALSE(ParseAtomicWriteTempName("report.md.tmp.12.x", &target, &pid));
  EXPECT_FALSE(ParseAtomicWriteTempName(".tmp.12.34", &target, &pid));
}

TEST(FileIo, RemovesOnlyTemporariesOfDeadWriters) {
  const std::string dir = FreshDir("interrupted");
  fs::create_directories(dir + "/arms/n512");
  const int64_t dead = DeadPid();
  const fs::path stale_top = absl::StrCat(dir, "/config.json.tmp.", dead, ".7");
  const fs::path stale_nested = absl::StrCat(dir, "/arms/n512/state.json.tmp.", dead, ".8");
  const fs::path ours = absl::StrCat(dir, "/report.md.tmp.", ::getpid(), ".9");
  const fs::path real = dir + "/arms/n512/state.json";
  const fs::path lookalike = dir + "/notes.tmp.txt";
  for (const fs::path& p : {stale_top, stale_nested, ours, real, lookalike}) Touch(p);

  std::vector<std::string> removed = RemoveInterruptedAtomicWrites(dir);
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{stale_nested.string(), stale_top.string()}));
  EXPECT_FALSE(fs::exists(stale_top));
  EXPECT_FALSE(fs::exists(stale_nested));
  EXPECT_TRUE(fs::exists(ours)) << "a live writer's (this process's) temporary was removed";
  EXPECT_TRUE(fs::exists(real));
  EXPECT_TRUE(fs::exists(lookalike));
  EXPECT_TRUE(RemoveInterruptedAtomicWrites(dir).empty());
  EXPECT_TRUE(RemoveInterruptedAtomicWrites(dir + "/no-such-dir").empty());
}

}  // namespace
}  // namespace flashtick
