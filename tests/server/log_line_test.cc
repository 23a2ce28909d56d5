// Log lines cannot be forged or blown up by client strings: control characters
// are escaped and a line is cut at kMaxLogLineBytes.
#include <gtest/gtest.h>

#include <string>

#include "server/logging.h"

namespace flashtick {
namespace {

TEST(LogLine, ControlCharactersAreEscaped) {
  const std::string forged = "model 'x'\nI1202 05:00:00.000000 operator token accepted\r\x1b[2J";
  const std::string line = LogLine(forged);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.find('\r'), std::string::npos);
  EXPECT_EQ(line.find('\x1b'), std::string::npos);
  EXPECT_NE(line.find("\\x0a"), std::string::npos) << line;
  EXPECT_EQ(LogLine("plain text, ünïcode kept"), "plain text, ünïcode kept");
}

TEST(LogLine, LongMessagesAreCut) {
  const std::string line = LogLine(std::string(1 << 20, 'a'));
  EXPECT_LT(line.size(), kMaxLogLineBytes + 64);
  EXPECT_NE(line.find("(1048576 bytes)"), std::string::npos);
}

}  // namespace
}  // namespace flashtick
