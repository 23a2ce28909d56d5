// StepProfiler: per-segment timing of a training step (trainer/step_profiler.h).
#include "trainer/step_profiler.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {
namespace {

void SortRows(StepProfile& p) {
  for (ProfileRow& r : p.rows) r.share = p.total_ms > 0 ? r.ms / p.total_ms : 0;
  std::stable_sort(p.rows.begin(), p.rows.end(),
                   [](const ProfileRow& a, const ProfileRow& b) { return a.ms > b.ms; });
}

}  // namespace

void StepProfile::Add(const StepProfile& other) {
  steps += other.steps;
  total_ms += other.total_ms;
  for (const ProfileRow& o : other.rows) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const ProfileRow& r) {
      return r.phase == o.phase && r.kind == o.kind;
    });
    if (it == rows.end()) {
      rows.push_back(o);
    } else {
      it->ms += o.ms;
      it->count += o.count;
    }
  }
  SortRows(*this);
}

StepProfile StepProfile::ByPhase() const {
  StepProfile p;
  p.steps = steps;
  p.total_ms = total_ms;
  for (const ProfileRow& r : rows) {
    StepProfile one;
    one.rows.push_back(ProfileRow{r.phase, "*", r.ms, r.count, 0});
    p.Add(one);
  }
  SortRows(p);
  return p;
}

std::string StepProfile::Table() const {
  const double n = steps > 0 ? static_cast<double>(steps) : 1.0;
  char line[160];
  std::snprintf(line, sizeof line, "%-13s %-16s %12s %8s %7s\n", "phase", "kind", "ms/step",
                "n/step", "share");
  std::string out = line;
  for (const ProfileRow& r : rows) {
    std::snprintf(line, sizeof line, "%-13s %-16s %12.3f %8.1f %6.1f%%\n", r.phase.c_str(),
                  r.kind.c_str(), r.ms / n, static_cast<double>(r.count) / n, 100 * r.share);
    out += line;
  }
  std::snprintf(line, sizeof line, "%-13s %-16s %12.3f %8s %6.1f%%  (%lld steps)\n", "total", "",
                total_ms / n, "", total_ms > 0 ? 100.0 : 0.0, static_cast<long long>(steps));
  return out + line;
}

void StepProfiler::Begin() {
  backend_->ResetMarks();
  segments_.clear();
  active_ = true;
}

absl::Status StepProfiler::Mark(const char* phase, const char* kind) {
  if (!active_) return absl::OkStatus();
  ASSIGN_OR_RETURN(int mark, backend_->RecordMark());
  segments_.push_back(Segment{mark, phase, kind});
  return absl::OkStatus();
}

absl::StatusOr<StepProfile> StepProfiler::End() {
  if (!active_) return absl::FailedPreconditionError("StepProfiler::End without Begin");
  active_ = false;
  StepProfile p;
  p.steps = 1;
  if (segments_.empty()) return last_ = p;
  ASSIGN_OR_RETURN(int last, backend_->RecordMark());
  RETURN_IF_ERROR(backend_->Synchronize());
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (size_t i = 0; i < segments_.size(); ++i) {
    const Segment& s = segments_[i];
    const int next = i + 1 < segments_.size() ? segments_[i + 1].mark : last;
    ASSIGN_OR_RETURN(double ms, backend_->MarkElapsedMs(s.mark, next));
    auto [it, fresh] = index.try_emplace({s.phase, s.kind}, p.rows.size());
    if (fresh) p.rows.push_back(ProfileRow{s.phase, s.kind});
    ProfileRow& r = p.rows[it->second];
    r.ms += ms;
    ++r.count;
    p.total_ms += ms;  // the segments tile the step: their sum is first mark to last
  }
  SortRows(p);
  last_ = p;
  return p;
}

}  // namespace flashtick
