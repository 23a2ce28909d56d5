// CleanTicks / CleanBars (see cleaning.h). One pass each; duplicates are found
// with a hash set over the rows kept at the current timestamp, reset whenever the
// timestamp advances (kept rows never go back in time), so the pass is O(rows).
#include "ticks/cleaning.h"

#include <cstring>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace flashtick {
namespace {

void AppendBytes(std::string* key, double v) {
  char b[sizeof(double)];
  std::memcpy(b, &v, sizeof(double));
  key->append(b, sizeof(double));
}

std::string ContentKey(const Tick& t) {
  std::string key;
  for (double v : {t.bid, t.ask, t.bid_size, t.ask_size, t.trade_price, t.trade_size}) {
    AppendBytes(&key, v);
  }
  key += t.has_trade ? 'T' : 'Q';
  key += t.source;
  return key;
}

void Drop(CleaningReport* r, int64_t* counter, int64_t line) {
  ++*counter;
  if (static_cast<int>(r->first_dropped_lines.size()) < CleaningReport::kMaxLinesKept) {
    r->first_dropped_lines.push_back(line);
  }
}

}  // namespace

std::string CleaningReport::ToString() const {
  return absl::StrCat("rows=", input_rows, " kept=", kept, " dropped=", dropped(),
                      " (out_of_order=", out_of_order, " crossed=", crossed, " locked=", locked,
                      " non_positive=", non_positive, " invalid=", invalid,
                      " duplicates=", duplicates, ") first dropped lines: [",
                      absl::StrJoin(first_dropped_lines, ","), "]");
}

CleanQuotes CleanTicks(const std::vector<Tick>& rows) {
  CleanQuotes out;
  CleaningReport& r = out.report;
  r.input_rows = static_cast<int64_t>(rows.size());
  std::unordered_set<std::string> same_time;
  for (const Tick& t : rows) {
    const bool have_last = !out.ticks.empty();
    if (have_last && t.time_us < out.ticks.back().time_us) {
      Drop(&r, &r.out_of_order, t.line);
      continue;
    }
    if (t.bid > t.ask) {
      Drop(&r, &r.crossed, t.line);
      continue;
    }
    if (t.bid == t.ask) {
      Drop(&r, &r.locked, t.line);
      continue;
    }
    if (t.bid <= 0 || t.bid_size < 0 || t.ask_size < 0 || (t.has_trade && t.trade_price <= 0)) {
      Drop(&r, &r.non_positive, t.line);
      continue;
    }
    if (have_last && t.time_us != out.ticks.back().time_us) same_time.clear();
    if (!same_time.insert(ContentKey(t)).second) {
      Drop(&r, &r.duplicates, t.line);
      continue;
    }
    out.ticks.push_back(t);
  }
  r.kept = static_cast<int64_t>(out.ticks.size());
  return out;
}

CleanBarSeries CleanBars(const std::vector<Bar>& rows) {
  CleanBarSeries out;
  CleaningReport& r = out.report;
  r.input_rows = static_cast<int64_t>(rows.size());
  for (const Bar& b : rows) {
    if (!out.bars.empty()) {
      if (b.time_us < out.bars.back().time_us) {
        Drop(&r, &r.out_of_order, b.line);
        continue;
      }
      if (b.time_us == out.bars.back().time_us) {
        Drop(&r, &r.duplicates, b.line);
        continue;
      }
    }
    const bool bad = b.open <= 0 || b.high <= 0 || b.low <= 0 || b.close <= 0 || b.low > b.high ||
                     b.open < b.low || b.open > b.high || b.close < b.low || b.close > b.high ||
                     b.volume < 0;
    if (bad) {
      Drop(&r, &r.invalid, b.line);
      continue;
    }
    out.bars.push_back(b);
  }
  r.kept = static_cast<int64_t>(out.bars.size());
  return out;
}

}  // namespace flashtick
