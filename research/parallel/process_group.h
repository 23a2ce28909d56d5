// ProcessGroup: this process's membership of a multi-process data-parallel job
// (docs/multi_gpu.md, multi-process): the job's TcpStore (served by rank 0 on
// MASTER_ADDR:MASTER_PORT) and the rendezvous of all WORLD_SIZE ranks through it.
// Create connects (retrying until the rendezvous timeout, as ranks start in any
// order); Rendezvous waits for every rank and names the missing ones on timeout;
// Leave ends a successful job without pulling the store from under a rank still
// using it (rank 0 waits for every rank's leave before its store closes).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "research/parallel/process_group_config.h"
#include "research/parallel/tcp_store.h"

namespace flashtick {

class ProcessGroup {
 public:
  static absl::StatusOr<std::unique_ptr<ProcessGroup>> Create(const ProcessGroupConfig& config,
                                                              double rendezvous_timeout_seconds);

  // DeadlineExceeded "rendezvous timed out after 30 s: 3 of 4 ranks joined (missing: 2)".
  absl::Status Rendezvous() { return store_->Barrier("rendezvous"); }
  absl::Status Leave();

  const ProcessGroupConfig& config() const { return config_; }
  int rank() const { return config_.rank; }
  int world_size() const { return config_.world_size; }
  int port() const { return store_->port(); }  // rank 0 with port 0: the one it picked
  TcpStore& store() { return *store_; }

 private:
  ProcessGroup(const ProcessGroupConfig& config, std::unique_ptr<TcpStore> store)
      : config_(config), store_(std::move(store)) {}
  ProcessGroupConfig config_;
  std::unique_ptr<TcpStore> store_;
};

}  // namespace flashtick
