// The precision check of the likely chosen arm, started early (see early_precision_check.h).
#include "research/sweep/early_precision_check.h"

#include <utility>

namespace flashtick {

EarlyPrecisionCheck::EarlyPrecisionCheck(std::string arm_id, Check check)
    : arm_id_(std::move(arm_id)), check_(std::move(check)) {}

EarlyPrecisionCheck::~EarlyPrecisionCheck() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_.valid()) running_.wait();
}

void EarlyPrecisionCheck::ArmFinished(const ArmResult& arm) {
  if (arm.arm_id != arm_id_ || arm.state != ArmState::kDone) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (running_.valid()) return;  // started already
  running_ = std::async(std::launch::async, check_);
}

std::optional<absl::StatusOr<PrecisionReport>> EarlyPrecisionCheck::Take(
    const std::string& arm_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_.valid()) return std::nullopt;
  running_.wait();
  if (arm_id != arm_id_) return std::nullopt;
  return running_.get();  // leaves running_ invalid: taken once
}

}  // namespace flashtick
