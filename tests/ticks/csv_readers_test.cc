// Tests for the tick-file layer: timestamps, CSV splitting, the quote and bar
// readers (errors carry line numbers, never crash), and cleaning counts.
#include <gtest/gtest.h>

#include "ticks/bars.h"
#include "ticks/cleaning.h"
#include "ticks/csv_table.h"
#include "ticks/quotes.h"
#include "ticks/timestamp.h"

namespace flashtick {
namespace {

TEST(TimestampTest, ParsesTheAcceptedForms) {
  EXPECT_EQ(*ParseTimestamp("1970-01-01"), 0);
  EXPECT_EQ(*ParseTimestamp("1970-01-02 00:00"), kMicrosPerDay);
  EXPECT_EQ(*ParseTimestamp("2000-03-01T00:00:01Z"),
            (DaysFromCivil(2000, 3, 1) * kSecondsPerDay + 1) * kMicrosPerSecond);
  EXPECT_EQ(*ParseTimestamp("1997-06-05 07:46:00.25") % kMicrosPerSecond, 250000);
  EXPECT_EQ(*ParseTimestamp("1997-06-05 07:46:00.123456789") % kMicrosPerSecond, 123456);
  // 2000-02-29 exists (divisible by 400); 1900-02-29 does not.
  EXPECT_TRUE(ParseTimestamp("2000-02-29").ok());
  EXPECT_FALSE(ParseTimestamp("1900-02-29").ok());
  // Unix time of a known instant: 2001-09-09 01:46:40 = 1e9 s.
  EXPECT_EQ(*ParseTimestamp("2001-09-09 01:46:40"), int64_t{1000000000} * kMicrosPerSecond);
}

TEST(TimestampTest, RejectsMalformedText) {
  for (const char* bad : {"", "1997", "1997-13-01", "1997-06-31", "1997-06-01 24:00",
                          "1997-06-01 12:60", "1997-06-01 12:00:61", "1997-06-01 12:00:00.",
                          "1997-06-01x", "1997/06/01", "1899-12-31", "1997-06-01 1:00"}) {
    EXPECT_FALSE(ParseTimestamp(bad).ok()) << bad;
  }
}

TEST(TimestampTest, FormatsRoundTripAndWeekdays) {
  for (int64_t day : {-25567, -1, 0, 1, 10000, 11114, 60000}) {
    EXPECT_EQ(DayOf(*ParseTimestamp(FormatDate(day))), day) << day;
  }
  EXPECT_EQ(FormatDate(0), "1970-01-01");
  EXPECT_EQ(FormatTimestamp(*ParseTimestamp("1997-06-05 07:46:03.5")),
            "1997-06-05 07:46:03.500000");
  EXPECT_EQ(Weekday(DaysFromCivil(1997, 6, 1)), 6);  // a Sunday
  EXPECT_EQ(Weekday(DaysFromCivil(2026, 1, 2)), 4);  // a Friday
  EXPECT_EQ(DayOf(-1), -1);
}

TEST(CsvTableTest, QuotesDelimitersCommentsAndLineNumbers) {
  const std::string text =
      "# exported by a desk\r\n"
      "Date;\"Close\";Note\r\n"
      "\r\n"
      "2000-01-03;1.5;\"a;b \"\"quoted\"\"\"\r\n";
  auto t = CsvTable::Parse(text, "x.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->delimiter(), ';');
  EXPECT_EQ(t->header(), (std::vector<std::string>{"date", "close", "note"}));
  ASSERT_EQ(t->rows().size(), 1u);
  EXPECT_EQ(t->rows()[0].line, 4);
  EXPECT_EQ(t->rows()[0].fields[2], "a;b \"quoted\"");
  EXPECT_EQ(t->Find({"price", "close"}), 1);
  EXPECT_EQ(t->Find({"volume"}), -1);
}

TEST(CsvTableTest, ErrorsNameTheLine) {
  auto ragged = CsvTable::Parse("a,b\n1,2\n3\n", "f.csv");
  ASSERT_FALSE(ragged.ok());
  EXPECT_NE(ragged.status().message().find("f.csv line 3"), absl::string_view::npos)
      << ragged.status();
  auto open_quote = CsvTable::Parse("a,b\n\"1,2\n", "g.csv");
  ASSERT_FALSE(open_quote.ok());
  EXPECT_NE(open_quote.status().message().find("line 2"), absl::string_view::npos);
  EXPECT_FALSE(CsvTable::Parse("", "empty.csv").ok());
  EXPECT_FALSE(CsvTable::Parse(std::string("a\n\0\n", 4), "nul.csv").ok());
}

TEST(QuotesReaderTest, ReadsQuotesAndTrades) {
  const std::string text =
      "timestamp,bid,ask,bid_size,ask_size,trade_price,trade_size,venue,ignored\n"
      "2024-03-01 09:30:00.000,100.00,100.02,5,7,,,X,z\n"
      "2024-03-01 09:30:00.500,100.00,100.02,5,7,100.02,300,X,z\n";
  auto ticks = ParseQuotesCsv(text, "q.csv");
  ASSERT_TRUE(ticks.ok()) << ticks.status();
  ASSERT_EQ(ticks->size(), 2u);
  EXPECT_FALSE((*ticks)[0].has_trade);
  EXPECT_TRUE((*ticks)[1].has_trade);
  EXPECT_DOUBLE_EQ((*ticks)[1].trade_size, 300);
  EXPECT_EQ((*ticks)[1].source, "X");
  EXPECT_EQ((*ticks)[1].line, 3);
  EXPECT_EQ((*ticks)[1].time_us - (*ticks)[0].time_us, 500000);
}

TEST(QuotesReaderTest, MalformedInputIsAnErrorWithALineNumber) {
  struct Case {
    const char* text;
    const char* want;
  };
  for (const Case& c : std::vector<Case>{
           {"time,bid\n2024-01-01,1\n", "needs 'bid' and 'ask'"},
           {"time,bid,ask\n2024-01-01,1,2\n2024-01-01,abc,2\n", "line 3: column 'bid'"},
           {"time,bid,ask\n2024-01-01,1,nan\n", "line 2: column 'ask'"},
           {"time,bid,ask\n2024-01-01,,2\n", "line 2: column 'bid' is empty"},
           {"time,bid,ask\n01/02/2024,1,2\n", "line 2: column 'time'"},
           {"time,bid,ask,price,size\n2024-01-01,1,2,1.5,-3\n", "line 2: negative trade size"},
       }) {
    auto r = ParseQuotesCsv(c.text, "bad.csv");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.want), absl::string_view::npos) << r.status();
  }
}

TEST(BarsReaderTest, ReadsTheTimeSeriesMsftLayout) {
  // The layout of timeSeries' extdata/msft.csv: ';' and a format string as the
  // first header, so the timestamp falls back to the first column.
  const std::string text =
      "\"%Y-%m-%d\";Open;High;Low;Close;Volume\n"
      "2000-09-27;63.4375;63.5625;59.8125;60.625;53077800\n"
      "2000-09-28;60.8125;61.875;60.625;61.3125;26180200\n";
  auto bars = ParseBarsCsv(text, "msft.csv");
  ASSERT_TRUE(bars.ok()) << bars.status();
  ASSERT_EQ(bars->size(), 2u);
  EXPECT_DOUBLE_EQ((*bars)[1].high, 61.875);
  EXPECT_DOUBLE_EQ((*bars)[0].volume, 53077800);
  EXPECT_EQ(FormatDate(DayOf((*bars)[1].time_us)), "2000-09-28");
}

TEST(BarsReaderTest, CloseOnlySeriesFillsOhlc) {
  auto bars = ParseBarsCsv("timestamp,close\n1996-04-01 00:00:00,1.1930\n");
  ASSERT_TRUE(bars.ok()) << bars.status();
  EXPECT_DOUBLE_EQ((*bars)[0].open, 1.193);
  EXPECT_DOUBLE_EQ((*bars)[0].low, 1.193);
  EXPECT_FALSE(ParseBarsCsv("timestamp,open\n2000-01-01,1\n").ok());
}

Tick Q(const char* time, double bid, double ask, const char* src = "") {
  static int64_t line = 1;
  Tick t;
  t.time_us = *ParseTimestamp(time);
  t.bid = bid;
  t.ask = ask;
  t.source = src;
  t.line = ++line;
  return t;
}

TEST(CleaningTest, CountsEachRuleOnceInOrder) {
  std::vector<Tick> rows = {
      Q("2024-01-02 10:00:00", 10.0, 10.1, "A"),
      Q("2024-01-02 10:00:00", 10.0, 10.1, "A"),  // duplicate
      Q("2024-01-02 10:00:00", 10.0, 10.1, "B"),  // same prices, other source: kept
      Q("2024-01-02 10:00:05", 10.2, 10.1),       // crossed
      Q("2024-01-02 10:00:06", 10.1, 10.1),       // locked
      Q("2024-01-02 10:00:07", 0.0, 10.1),        // non-positive bid
      Q("2024-01-02 09:59:00", 10.2, 10.1),       // out of order (checked before crossed)
      Q("2024-01-02 10:00:08", 10.0, 10.1, "A"),  // same content, later time: kept
      Q("2024-01-02 10:00:08", 25.3, 0.0),        // zero ask: counted as crossed
  };
  const CleanQuotes c = CleanTicks(rows);
  EXPECT_EQ(c.report.input_rows, 9);
  EXPECT_EQ(c.report.kept, 3);
  EXPECT_EQ(c.report.duplicates, 1);
  EXPECT_EQ(c.report.crossed, 2);
  EXPECT_EQ(c.report.locked, 1);
  EXPECT_EQ(c.report.non_positive, 1);
  EXPECT_EQ(c.report.out_of_order, 1);
  EXPECT_EQ(c.report.dropped(), 6);
  EXPECT_EQ(c.report.first_dropped_lines.size(), 6u);
  for (size_t i = 1; i < c.ticks.size(); ++i) EXPECT_LE(c.ticks[i - 1].time_us, c.ticks[i].time_us);
  EXPECT_NE(c.report.ToString().find("crossed=2"), std::string::npos);
}

TEST(CleaningTest, BarsRules) {
  auto bars = ParseBarsCsv(
      "time,open,high,low,close,volume\n"
      "2024-01-02,10,11,9,10.5,100\n"
      "2024-01-02,10,11,9,10.5,100\n"  // duplicate time
      "2024-01-03,10,9,11,10,100\n"    // low > high
      "2024-01-04,10,11,9,12,100\n"    // close above high
      "2024-01-01,10,11,9,10,100\n"    // out of order
      "2024-01-05,10,11,9,10,-1\n"     // negative volume
      "2024-01-08,10,11,9,10,0\n");
  ASSERT_TRUE(bars.ok()) << bars.status();
  const CleanBarSeries c = CleanBars(*bars);
  EXPECT_EQ(c.report.kept, 2);
  EXPECT_EQ(c.report.duplicates, 1);
  EXPECT_EQ(c.report.invalid, 3);
  EXPECT_EQ(c.report.out_of_order, 1);
}

}  // namespace
}  // namespace flashtick
