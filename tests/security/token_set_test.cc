// TokenSet: the --auth-token-file format (comments, blank lines, trimming), the
// errors (missing file, no token, a token with a space) that name the flag and
// the path but never the token, and matching (exact only: no prefix, no
// extension, no empty token).
#include "server/auth/token_set.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace flashtick {
namespace {

TEST(TokenSetTest, ParsesTokensSkippingCommentsAndBlankLines) {
  auto set = TokenSet::Parse("# ops team\n\n  alpha-123  \r\n#beta-456\nbeta-789\n", "test");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->size(), 2u);
  EXPECT_TRUE(set->Matches("alpha-123"));
  EXPECT_TRUE(set->Matches("beta-789"));
  EXPECT_FALSE(set->Matches("beta-456"));  // commented out
  EXPECT_FALSE(set->Matches("# ops team"));
}

TEST(TokenSetTest, MatchesExactlyOnly) {
  auto set = TokenSet::Parse("s3cret-token\n", "test");
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->Matches("s3cret-token"));
  EXPECT_FALSE(set->Matches(""));
  EXPECT_FALSE(set->Matches("s3cret"));             // prefix
  EXPECT_FALSE(set->Matches("s3cret-token-more"));  // extension
  EXPECT_FALSE(set->Matches("s3cret-tokeN"));       // last byte
  EXPECT_FALSE(set->Matches("S3cret-token"));       // first byte
}

TEST(TokenSetTest, MatchNamesTheTokensPositionFirstMatchWins) {
  // The position names the client for per-client limits ("token#2").
  auto set = TokenSet::Parse("# team tokens\nalpha-1\n\nbeta-2\nalpha-1\ngamma-3\n", "test");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->Match("alpha-1"), 1);  // listed twice: the first line's position
  EXPECT_EQ(set->Match("beta-2"), 2);
  EXPECT_EQ(set->Match("gamma-3"), 4);
  EXPECT_EQ(set->Match("delta-4"), 0);
  EXPECT_EQ(set->Match(""), 0);
}

TEST(TokenSetTest, EmptyOrMalformedFilesAreErrorsWithoutTheToken) {
  auto empty = TokenSet::Parse("# nothing\n\n", "--auth-token-file 'x'");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("holds no token"), std::string::npos);
  auto spaced = TokenSet::Parse("ok-token\nhas space-secret\n", "--auth-token-file 'x'");
  EXPECT_EQ(spaced.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spaced.status().message().find("line 2"), std::string::npos);
  EXPECT_EQ(spaced.status().message().find("space-secret"), std::string::npos);
}

TEST(TokenSetTest, MissingFileNamesFlagAndPath) {
  const std::string path = ::testing::TempDir() + "/no_such_tokens_" + std::to_string(getpid());
  auto set = TokenSet::LoadFile(path);
  EXPECT_EQ(set.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(set.status().message().find("--auth-token-file"), std::string::npos);
  EXPECT_NE(set.status().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace flashtick
