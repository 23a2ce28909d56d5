// TcpReduceGroup: the ReduceGroup of one process per rank, over TCP: the CPU fallback
// of multi-process data parallelism (NCCL's role on GPUs), so CI runs it without GPUs.
// Full mesh: every pair of ranks shares one connection, set up through the job's
// TcpStore (each rank publishes "<prefix>mesh/<rank>" = address:port of its listener;
// a rank connects to the lower ranks and accepts the higher ones). A job that builds
// several meshes (a control group beside a trainer's, a new trainer per fold) gives
// each its own key prefix, since a store key is set once and read by every rank.
// One AllReduceSum is a header round (count, dtype and call number must agree on
// every rank), then reduce-scatter + all-gather: rank r owns slice
// [count·r/W, count·(r+1)/W), receives that slice from every rank, sums it in rank
// order with fp64 accumulation and sends the sum back to every rank. These are
// HostReduceGroup's sums bit for bit, so a run over W processes equals the in-process
// run over W threads (tests/parallel/).
// A peer that exits gives Unavailable ("rank 2 closed its connection"); one that
// stops sending gives DeadlineExceeded after timeout_seconds without progress.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "research/parallel/reduce_group.h"
#include "research/parallel/socket_io.h"
#include "research/parallel/tcp_store.h"

namespace flashtick {

class TcpReduceGroup final : public ReduceGroup {
 public:
  // Every rank of `store`'s job calls it; it returns once the mesh is connected, or
  // fails after the store's (rendezvous) timeout. A collective that moves no byte for
  // stall_timeout_seconds fails with DeadlineExceeded. `key_prefix` scopes the mesh's
  // store keys (the same on every rank; unique per mesh of the job).
  static absl::StatusOr<std::unique_ptr<TcpReduceGroup>> Create(
      TcpStore& store, double stall_timeout_seconds, absl::string_view key_prefix = "");

  int rank() const { return rank_; }
  int world_size() const override { return world_size_; }
  // `rank` must be this process's rank.
  absl::Status AllReduceSum(int rank, void* data, int64_t count, DType dtype) override;
  void Abort() override { aborted_ = true; }

 private:
  TcpReduceGroup(int rank, int world_size, double timeout_seconds)
      : rank_(rank),
        world_size_(world_size),
        timeout_seconds_(timeout_seconds),
        peers_(world_size) {}
  template <typename T>
  absl::Status ReduceScatterAllGather(T* data, int64_t count);

  const int rank_, world_size_;
  const double timeout_seconds_;
  std::vector<net::Socket> peers_;  // [world_size]; peers_[rank_] unused
  std::atomic<bool> aborted_{false};
  int64_t calls_ = 0;
  std::vector<char> scratch_;
};

}  // namespace flashtick
