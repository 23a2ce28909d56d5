// Sweep arm promotion helpers (see arm_promotion.h).
#include "server/experiments/arm_promotion.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <memory>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "kernels/backend.h"
#include "trainer/train_checkpoint.h"
#include "trainer/trainer.h"

namespace flashtick {
namespace fs = std::filesystem;

absl::StatusOr<std::string> FinalArmCheckpoint(const std::string& arm_dir) {
  constexpr std::string_view kPrefix = "ckpt-f";
  int best = -1;
  std::string found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(arm_dir, ec)) {
    const std::string leaf = entry.path().filename().string();
    if (!entry.is_directory() || leaf.rfind(kPrefix, 0) != 0) continue;
    int fold = -1;
    const char* first = leaf.data() + kPrefix.size();
    const char* last = leaf.data() + leaf.size();
    auto parsed = std::from_chars(first, last, fold);
    if (parsed.ec != std::errc() || parsed.ptr != last || fold < 0) continue;
    if (!fs::exists(entry.path() / "manifest.json", ec)) continue;
    if (fold > best) {
      best = fold;
      found = entry.path().string();
    }
  }
  if (found.empty()) {
    return absl::NotFoundError(
        absl::StrCat("arm directory ", arm_dir, " holds no trainer checkpoint (ckpt-f<k>)"));
  }
  return found;
}

absl::Status ExportArmModel(const std::string& arm_dir, const std::string& out_dir) {
  ASSIGN_OR_RETURN(std::string checkpoint, FinalArmCheckpoint(arm_dir));
  BackendOptions options;
  options.threads = 1;
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend("cpu", options));
  absl::StatusOr<std::unique_ptr<Trainer>> trainer = TrainCheckpoint::Load(checkpoint, backend.get());
  if (!trainer.ok()) {
    return absl::Status(trainer.status().code(), absl::StrCat("loading the checkpoint ", checkpoint,
                                                              ": ", trainer.status().message()));
  }
  return (*trainer)->ExportModel(out_dir);
}

absl::StatusOr<std::string> WinningArm(const v1::Experiment& experiment, int64_t best_context) {
  std::vector<std::string> all;
  for (const v1::ArmStatus& a : experiment.arms()) all.push_back(a.arm_id());
  if (best_context <= 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "experiment ", experiment.id(),
        "'s verdict names no single best N (tied at the top); name the arm to promote "
        "(arm_id, `--arm`): ",
        absl::StrJoin(all, ", ")));
  }
  std::vector<const v1::ArmStatus*> seeds;
  for (const v1::ArmStatus& a : experiment.arms()) {
    if (a.context_length() == best_context) seeds.push_back(&a);
  }
  if (seeds.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("experiment ", experiment.id(),
                                                      " has no arm of its best N=", best_context,
                                                      "; arms: ", absl::StrJoin(all, ", ")));
  }
  std::sort(seeds.begin(), seeds.end(), [](const v1::ArmStatus* a, const v1::ArmStatus* b) {
    if (a->sharpe() != b->sharpe()) return a->sharpe() < b->sharpe();
    return a->seed() < b->seed();
  });
  return seeds[(seeds.size() - 1) / 2]->arm_id();
}

}  // namespace flashtick
