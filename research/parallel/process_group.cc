// ProcessGroup: store, rendezvous and an orderly leave (research/parallel/process_group.h).
#include "research/parallel/process_group.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

absl::StatusOr<std::unique_ptr<ProcessGroup>> ProcessGroup::Create(
    const ProcessGroupConfig& config, double rendezvous_timeout_seconds) {
  TcpStoreOptions o;
  o.host = config.master_addr;
  o.port = config.master_port;
  o.rank = config.rank;
  o.world_size = config.world_size;
  o.timeout_seconds = rendezvous_timeout_seconds;
  o.limits.max_connections = 2 * config.world_size + 8;
  ASSIGN_OR_RETURN(std::unique_ptr<TcpStore> store, TcpStore::Create(o));
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(config, std::move(store)));
}

absl::Status ProcessGroup::Leave() {
  ASSIGN_OR_RETURN(int64_t left, store_->Add("leave", 1));
  if (rank() != 0) return absl::OkStatus();
  const auto deadline = net::Clock::now() + net::Seconds(store_->timeout_seconds());
  while (left < world_size()) {
    if (net::Clock::now() >= deadline)
      return absl::DeadlineExceededError(absl::StrCat("leaving: ", left, " of ", world_size(),
                                                      " ranks finished within ",
                                                      store_->timeout_seconds(), " s"));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSIGN_OR_RETURN(left, store_->Add("leave", 0));
  }
  return absl::OkStatus();
}

}  // namespace flashtick
