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

absl::StatusOr<bool> ProcessGroup::AnyTrue(bool mine) {
  if (world_size() == 1) return mine;
  if (control_ == nullptr) {
    ASSIGN_OR_RETURN(control_, TcpReduceGroup::Create(*store_, collective_timeout_seconds_,
                                                      "control/"));
  }
  // A sum of 0s and 1s in fp64 is exact: more than 0 means some rank said true.
  double votes = mine ? 1.0 : 0.0;
  absl::Status s = control_->AllReduceSum(rank(), &votes, 1, DType::kF64);
  if (!s.ok())
    return absl::Status(s.code(), absl::StrCat("agreeing with the other ranks (rank ", rank(),
                                               " of ", world_size(), "): ", s.message()));
  return votes > 0;
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
