// ProcessGroup: this process's membership of a multi-process data-parallel job
// (docs/multi_gpu.md, multi-process): the job's TcpStore (served by rank 0 on
// MASTER_ADDR:MASTER_PORT) and the rendezvous of all WORLD_SIZE ranks through it.
// Create connects (retrying until the rendezvous timeout, as ranks start in any
// order); Rendezvous waits for every rank and names the missing ones on timeout;
// Leave ends a successful job without pulling the store from under a rank still
// using it (rank 0 waits for every rank's leave before its store closes).
// AnyTrue is the job's agreement collective: ranks that must take the same decision
// from local inputs (a wall-clock budget, a SIGTERM that reached one pod) each give
// their bit and all get the OR, so their control flow stays in step and no rank waits
// in a collective the others skipped (docs/multi_gpu.md, "One sweep arm over processes").
// It sums over a TcpReduceGroup of its own (a mesh beside the trainer's, made at the
// first call), so it works the same on CPU and CUDA jobs and a dead peer fails it at
// once (Unavailable) instead of after a store timeout.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "research/parallel/process_group_config.h"
#include "research/parallel/tcp_reduce_group.h"
#include "research/parallel/tcp_store.h"

namespace flashtick {

class ProcessGroup {
 public:
  static absl::StatusOr<std::unique_ptr<ProcessGroup>> Create(const ProcessGroupConfig& config,
                                                              double rendezvous_timeout_seconds);

  // DeadlineExceeded "rendezvous timed out after 30 s: 3 of 4 ranks joined (missing: 2)".
  absl::Status Rendezvous() { return store_->Barrier("rendezvous"); }
  absl::Status Leave();

  // Collective: every rank calls it, in the same order; true on every rank when any
  // rank passed true. Fails (Unavailable, DeadlineExceeded) when a peer died or stalled
  // for collective_timeout_seconds.
  absl::StatusOr<bool> AnyTrue(bool mine);
  // A fresh store-key prefix for a structure all ranks build together ("<what>/<k>/",
  // k counting per process): the same on every rank as long as they build the same
  // structures in the same order, and never a key an earlier one used.
  std::string NextScope(absl::string_view what) {
    return std::string(what) + "/" + std::to_string(scopes_++) + "/";
  }
  // The stall timeout of AnyTrue's group (set before the first call) and the one
  // trainers over this group should use.
  double collective_timeout_seconds() const { return collective_timeout_seconds_; }
  void set_collective_timeout_seconds(double s) { collective_timeout_seconds_ = s; }

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
  std::unique_ptr<TcpReduceGroup> control_;  // AnyTrue's mesh, made at its first call
  int64_t scopes_ = 0;
  double collective_timeout_seconds_ = 300;
};

}  // namespace flashtick
