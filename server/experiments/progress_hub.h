// ProgressHub: fans an experiment's progress events out to its watchers
// (WatchExperiment streams). Listeners are called under the hub's lock, in the
// publishing thread, and must only enqueue; after Unsubscribe returns a listener
// is never called again, so a reactor can delete itself right after. The last
// event of each experiment is kept, so a new watcher starts from where it stands.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "flashtick/v1/experiments.pb.h"

namespace flashtick {

class ProgressHub {
 public:
  using Listener = std::function<void(const v1::ExperimentProgress&)>;

  // Returns a token for Unsubscribe.
  int64_t Subscribe(const std::string& experiment_id, Listener listener);
  void Unsubscribe(int64_t token);
  void Publish(const v1::ExperimentProgress& event);
  std::optional<v1::ExperimentProgress> Last(const std::string& experiment_id) const;
  int watchers() const;

 private:
  struct Entry {
    std::string experiment_id;
    Listener listener;
  };
  mutable std::mutex mu_;
  int64_t next_token_ = 1;
  std::map<int64_t, Entry> listeners_;
  std::map<std::string, v1::ExperimentProgress> last_;
};

}  // namespace flashtick
