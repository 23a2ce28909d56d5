// Restarts on a stall: the first fold's starts in the ArmResult (see stall_restarts.h).
#include "research/sweep/stall_restarts.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace flashtick {
namespace {

constexpr char kStartDirPrefix[] = "ckpt-f0-start";

// A start's best validation loss for the choice: one that never reached a check (the
// time budget ended it first) loses to any that did. `Start` is a set-aside
// FirstFoldStart or the ArmResult of the start still training (same two fields).
template <typename Start>
double Best(const Start& s) {
  return s.validation_curve.empty() ? std::numeric_limits<double>::infinity()
                                    : s.best_validation_loss;
}

std::string Describe(const FirstFoldStart& s) {
  return absl::StrCat("start ", s.index, " (seed ", s.seed, ") ", s.ended, ", ",
                      s.validation_curve.empty()
                          ? std::string("no validation check")
                          : absl::StrFormat("best %.4g at step %d", s.best_validation_loss,
                                            s.best_validation_step));
}

}  // namespace

uint64_t RestartSeed(uint64_t seed, int k) {
  return k == 0 ? seed : seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(k);
}

size_t ChooseStart(const std::vector<double>& best_validation_loss) {
  size_t kept = 0;
  for (size_t i = 1; i < best_validation_loss.size(); ++i) {
    if (best_validation_loss[i] < best_validation_loss[kept]) kept = i;  // strict: ties keep
  }
  return kept;
}

int RepeatedStart(double best, const std::vector<double>& earlier, double tolerance) {
  if (tolerance <= 0 || !std::isfinite(best)) return -1;
  for (size_t j = 0; j < earlier.size(); ++j) {
    const double e = earlier[j];
    if (std::isfinite(e) && std::abs(best - e) <= tolerance * std::abs(e)) {
      return static_cast<int>(j);
    }
  }
  return -1;
}

std::string WhyNoStallRestart(const ArmResult& r, int allowed, double tolerance) {
  if (r.stall_restarts_begun >= allowed) return "no stall restart left";
  std::vector<double> earlier;
  for (const FirstFoldStart& s : r.stall_starts) earlier.push_back(Best(s));
  const int repeated = RepeatedStart(Best(r), earlier, tolerance);
  return repeated >= 0 ? absl::StrCat("start ", repeated, "'s loss again") : std::string();
}

std::string StallStartDir(const std::string& arm_dir, int start) {
  return absl::StrCat(arm_dir, "/", kStartDirPrefix, start);
}

void RemoveStallStartDirs(const std::string& arm_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(arm_dir, ec)) {
    if (absl::StartsWith(e.path().filename().string(), kStartDirPrefix)) dirs.push_back(e.path());
  }
  for (const fs::path& d : dirs) fs::remove_all(d, ec);
}

FirstFoldStart TakeStart(ArmResult* r, int index, uint64_t seed, int64_t steps,
                         std::string ended) {
  FirstFoldStart s;
  s.index = index;
  s.seed = seed;
  s.steps = steps;
  s.ended = std::move(ended);
  s.loss = r->loss;
  s.best_validation_loss = r->best_validation_loss;
  s.best_validation_step = r->best_validation_step;
  s.loss_curve = std::move(r->loss_curve);
  s.validation_curve = std::move(r->validation_curve);
  // The first fold is the arm's first: its curves were the start's alone.
  r->loss_curve.clear();
  r->validation_curve.clear();
  r->best_validation_loss = 0;
  r->best_validation_step = 0;
  return s;
}

FirstFoldStart KeepBestStart(ArmResult* r, FirstFoldStart current, int allowed) {
  std::vector<FirstFoldStart> all = std::move(r->stall_starts);
  all.push_back(std::move(current));
  std::vector<double> bests;
  for (const FirstFoldStart& s : all) bests.push_back(Best(s));
  const size_t kept = ChooseStart(bests);
  std::vector<std::string> parts;
  for (const FirstFoldStart& s : all) parts.push_back(Describe(s));
  r->restart_choice = absl::StrCat("stall restarts (at most ", allowed, "): ",
                                   absl::StrJoin(parts, "; "), "; kept start ", all[kept].index);
  FirstFoldStart k = std::move(all[kept]);
  r->stall_starts.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    if (i != kept) r->stall_starts.push_back(std::move(all[i]));
  }
  r->loss = k.loss;
  r->best_validation_loss = k.best_validation_loss;
  r->best_validation_step = k.best_validation_step;
  r->loss_curve = std::move(k.loss_curve);
  r->validation_curve = std::move(k.validation_curve);
  k.loss_curve.clear();
  k.validation_curve.clear();
  return k;
}

}  // namespace flashtick
