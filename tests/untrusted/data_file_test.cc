// Data files named by a client (a sweep's data.csv.paths): confined to the data
// root (no '..', no absolute path outside it, no symlink out, and a refusal that
// does not reveal whether the path exists), regular files only (a FIFO is refused
// at once instead of wedging the reader; /dev/zero instead of growing memory), a
// byte cap, and CSV errors that never echo the file's text.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include <gtest/gtest.h>

#include "ticks/data_file.h"
#include "ticks/quotes.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

class DataFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ft_data_file_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ / "root" / "sub");
    Write(dir_ / "root" / "sub" / "a.csv", "timestamp,bid,ask\n2024-01-01,1,2\n");
    Write(dir_ / "outside.txt", "SECRET-OUTSIDE\n");
    policy_.confined = true;
    policy_.root = (dir_ / "root").string();
    policy_.max_bytes = 1 << 20;
  }
  void TearDown() override {
    SetDataFilePolicy(DataFilePolicy{});
    fs::remove_all(dir_);
  }
  static void Write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }

  fs::path dir_;
  DataFilePolicy policy_;
};

TEST_F(DataFileTest, ReadsRelativeAndAbsolutePathsUnderTheRoot) {
  auto rel = ReadDataFile("sub/a.csv", policy_);
  ASSERT_TRUE(rel.ok()) << rel.status();
  EXPECT_NE(rel->find("bid"), std::string::npos);
  auto abs = ReadDataFile((dir_ / "root" / "sub" / "a.csv").string(), policy_);
  EXPECT_TRUE(abs.ok()) << abs.status();
}

TEST_F(DataFileTest, PathsOutsideTheRootAreRefusedAlike) {
  const std::string outside = (dir_ / "outside.txt").string();
  const std::string missing = (dir_ / "no_such_file").string();
  for (const std::string& p : {outside, missing, std::string("/etc/passwd"),
                               std::string("/proc/self/environ"), std::string("sub/../../outside.txt"),
                               std::string("../outside.txt")}) {
    auto r = ReadDataFile(p, policy_);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << p << ": " << r.status();
    EXPECT_EQ(r.status().message().find("SECRET"), std::string::npos);
  }
  // Same answer whether the outside file exists or not: nothing leaks.
  std::string a(ReadDataFile(outside, policy_).status().message());
  std::string b(ReadDataFile(missing, policy_).status().message());
  EXPECT_EQ(a.substr(a.find(" is ")), b.substr(b.find(" is ")));
}

TEST_F(DataFileTest, SymlinkOutOfTheRootIsRefused) {
  fs::create_symlink(dir_ / "outside.txt", dir_ / "root" / "link.csv");
  auto r = ReadDataFile("link.csv", policy_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << r.status();
}

TEST_F(DataFileTest, NoRootMeansNoDataFiles) {
  DataFilePolicy off;
  off.confined = true;
  auto r = ReadDataFile((dir_ / "root" / "sub" / "a.csv").string(), off);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << r.status();
}

TEST_F(DataFileTest, FifoIsRefusedAtOnceNotWaitedOn) {
  const fs::path fifo = dir_ / "root" / "pipe.csv";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto read = std::async(std::launch::async, [&] { return ReadDataFile("pipe.csv", policy_); });
  if (read.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    // Release the blocked open so the test can end, then fail.
    const int w = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) close(w);
    FAIL() << "reading a FIFO blocked";
  }
  auto r = read.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("not a regular file"), std::string::npos);
}

TEST_F(DataFileTest, DevicesAreRefusedEvenUnconfined) {
  DataFilePolicy local;  // the CLI's policy: any path, still regular files only
  for (const char* p : {"/dev/zero", "/dev/null", "/tmp"}) {
    auto r = ReadDataFile(p, local);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << p << ": " << r.status();
  }
}

TEST_F(DataFileTest, FilesPastTheByteCapAreRefused) {
  Write(dir_ / "root" / "big.csv", std::string(4096, 'x'));
  policy_.max_bytes = 1000;
  auto r = ReadDataFile("big.csv", policy_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
}

TEST_F(DataFileTest, CsvErrorsNeverEchoTheFile) {
  SetDataFilePolicy(policy_);
  const std::string secret = "sk_live_0123456789abcdefSECRET";
  Write(dir_ / "root" / "s1.csv", secret + "\n" + secret + "\n");  // header is the secret
  Write(dir_ / "root" / "s2.csv", secret + ",bid,ask\n" + secret + ",1,2\n");  // time column 1
  Write(dir_ / "root" / "s3.csv", "timestamp,bid,ask\n2024-01-01," + secret + ",2\n");
  for (const char* name : {"s1.csv", "s2.csv", "s3.csv"}) {
    auto r = ReadQuotesCsvFile(name);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().message().find("SECRET"), std::string::npos) << r.status();
    EXPECT_EQ(r.status().message().find("sk_live"), std::string::npos) << r.status();
  }
  EXPECT_NE(ReadQuotesCsvFile("s2.csv").status().message().find("column 1"), std::string::npos);
}

}  // namespace
}  // namespace flashtick
