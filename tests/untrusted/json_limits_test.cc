// Untrusted JSON limits: a config nested far past any real one is refused by
// nesting depth before it is parsed, and a bad value is described in a message by
// its type and size, never dumped (dump() recurses once per level: 200,000 levels
// overflow the stack; a multi-megabyte value would be copied only to be cut).
#include <gtest/gtest.h>

#include <string>

#include "research/sweep/json_limits.h"
#include "research/sweep/sweep_config.h"

namespace flashtick {
namespace {

std::string Nested(int depth, const std::string& inner = "1") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

TEST(JsonLimits, DeepNestingIsRefusedBeforeParsing) {
  const std::string text = "{\"contexts\": " + Nested(200000) + "}";
  auto c = ParseSweepConfig(text);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("levels deep"), std::string::npos) << c.status();
  EXPECT_LT(c.status().message().size(), 200u);
}

TEST(JsonLimits, NestingCountsBracketsOutsideStringsOnly) {
  EXPECT_TRUE(CheckJsonNesting(Nested(kMaxJsonDepth)).ok());
  EXPECT_FALSE(CheckJsonNesting(Nested(kMaxJsonDepth + 1)).ok());
  EXPECT_TRUE(CheckJsonNesting("{\"name\": \"" + std::string(1000, '[') + "\\\"[\"}").ok());
  // A config with a long bracket-filled name still parses as far as the name check.
  auto c = ParseSweepConfig("{\"name\": \"" + std::string(50, '{') + "\"}");
  EXPECT_TRUE(c.ok()) << c.status();
}

TEST(JsonLimits, BadContainersAreDescribedNotDumped) {
  // Within the depth limit, but a list of lists, which no field of the schema takes.
  auto c = ParseSweepConfig("{\"contexts\": " + Nested(kMaxJsonDepth - 1) + "}");
  ASSERT_FALSE(c.ok());
  const std::string msg(c.status().message());
  EXPECT_NE(msg.find("a list inside a list"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("[["), std::string::npos) << msg;

  auto obj = ParseSweepConfig("{\"name\": {\"a\": 1, \"b\": 2}}");
  ASSERT_FALSE(obj.ok());
  EXPECT_NE(obj.status().message().find("Starting an object on a scalar field"), std::string::npos)
      << obj.status();
  EXPECT_EQ(obj.status().message().find("\"a\""), std::string::npos) << obj.status();
}

TEST(JsonLimits, LongStringsAreDescribedByLength) {
  const std::string secret(100, 'S');
  auto c = ParseSweepConfig("{\"device\": \"" + secret + "\"}");
  ASSERT_FALSE(c.ok());
  const std::string msg(c.status().message());
  EXPECT_EQ(msg.find("SSSS"), std::string::npos) << msg;
  // A wrong type is protobuf's parser's message, which echoes the value: it is cut.
  const std::string big(100000, 'B');
  for (const std::string& text : {"{\"model\": {\"width\": \"" + big + "\"}}",
                                  "{\"" + big + "\": 1}"}) {
    auto t = ParseSweepConfig(text);
    ASSERT_FALSE(t.ok());
    EXPECT_LT(t.status().message().size(), 400u) << t.status().message().substr(0, 400);
    EXPECT_NE(t.status().message().find("more bytes)"), std::string::npos);
  }
  // Bytes that are not UTF-8 are echoed by protobuf's parser with a caret line under
  // them: the message stays printable and on one line.
  auto raw = ParseSweepConfig("{\"name\": \"a\xff\x01b\"}");
  ASSERT_FALSE(raw.ok());
  const std::string m(raw.status().message());
  EXPECT_NE(m.find("UTF-8"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_EQ(m.find('\xff'), std::string::npos) << m;
  EXPECT_EQ(m.find('\x01'), std::string::npos) << m;
  // Short scalars still read back, so the message stays actionable.
  auto d = ParseSweepConfig("{\"device\": \"gpu\"}");
  EXPECT_NE(d.status().message().find("got \"gpu\""), std::string::npos) << d.status();
}

}  // namespace
}  // namespace flashtick
