// ProgressHub (see progress_hub.h).
#include "server/experiments/progress_hub.h"

namespace flashtick {

int64_t ProgressHub::Subscribe(const std::string& experiment_id, Listener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t token = next_token_++;
  listeners_[token] = Entry{experiment_id, std::move(listener)};
  return token;
}

void ProgressHub::Unsubscribe(int64_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.erase(token);
}

void ProgressHub::Publish(const v1::ExperimentProgress& event) {
  std::lock_guard<std::mutex> lock(mu_);
  last_[event.experiment_id()] = event;
  for (auto& [token, entry] : listeners_) {
    if (entry.experiment_id == event.experiment_id()) entry.listener(event);
  }
}

std::optional<v1::ExperimentProgress> ProgressHub::Last(const std::string& experiment_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = last_.find(experiment_id);
  if (it == last_.end()) return std::nullopt;
  return it->second;
}

int ProgressHub::watchers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(listeners_.size());
}

}  // namespace flashtick
