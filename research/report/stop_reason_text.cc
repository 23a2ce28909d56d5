#include "research/report/stop_reason_text.h"

#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace flashtick {
namespace {

struct FoldEntry {
  int fold;
  std::string what;  // everything after "fold <number> "
};

std::optional<FoldEntry> ParseEntry(absl::string_view s) {
  constexpr absl::string_view kFold = "fold ";
  if (!absl::StartsWith(s, kFold)) return std::nullopt;
  s.remove_prefix(kFold.size());
  const size_t space = s.find(' ');
  if (space == absl::string_view::npos || space == 0) return std::nullopt;
  int fold = 0;
  if (!absl::SimpleAtoi(s.substr(0, space), &fold)) return std::nullopt;
  return FoldEntry{fold, std::string(s.substr(space + 1))};
}

// "what" for a run of folds: a trailing "(s of n steps)" reads "(s of n steps each)".
std::string Plural(const std::string& what) {
  constexpr absl::string_view kTail = " steps)";
  if (absl::EndsWith(what, kTail)) {
    return absl::StrCat(what.substr(0, what.size() - 1), " each)");
  }
  return what;
}

}  // namespace

std::string CompactStopReason(absl::string_view reason) {
  std::vector<std::string> out;
  std::optional<FoldEntry> run;  // the current run of folds with the same words
  int run_last = 0;
  auto flush = [&] {
    if (!run) return;
    out.push_back(run_last == run->fold
                      ? absl::StrCat("fold ", run->fold, " ", run->what)
                      : absl::StrCat("folds ", run->fold, "–", run_last, " ", Plural(run->what)));
    run.reset();
  };
  for (absl::string_view part : absl::StrSplit(reason, "; ", absl::SkipEmpty())) {
    std::optional<FoldEntry> e = ParseEntry(part);
    if (e && run && e->fold == run_last + 1 && e->what == run->what) {
      run_last = e->fold;
      continue;
    }
    flush();
    if (e) {
      run = std::move(e);
      run_last = run->fold;
    } else {
      out.emplace_back(part);
    }
  }
  flush();
  return absl::StrJoin(out, "; ");
}

}  // namespace flashtick
