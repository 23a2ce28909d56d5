// HostReduceGroup: an all-reduce (sum) over world_size threads sharing one address
// space: the collective behind HostAllReducer, which runs data parallelism on the CPU
// backend so it is tested without GPUs. Reduce-scatter then all-gather in one pass:
// after a barrier each rank sums its own 1/world_size slice of the buffers over every
// rank (rank order, fp64 accumulation) and writes the sum back to every rank's buffer;
// a second barrier ends the call. Every replica therefore gets bit-identical sums,
// as with NCCL's ring, which keeps the replicas' weights identical. TcpReduceGroup
// (tcp_reduce_group.h) computes the same sums between processes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "kernels/tensor.h"
#include "research/parallel/reduce_group.h"

namespace flashtick {

class HostReduceGroup final : public ReduceGroup {
 public:
  explicit HostReduceGroup(int world_size) : world_size_(world_size), ptrs_(world_size) {}

  int world_size() const override { return world_size_; }
  // Called by every rank with its own host buffer of `count` fp32 or fp64 values (the
  // same count and dtype on every rank); on return each buffer holds the sum.
  absl::Status AllReduceSum(int rank, void* data, int64_t count, DType dtype) override;
  // Wakes every rank waiting in AllReduceSum with an Aborted error; later calls fail.
  void Abort() override;

 private:
  absl::Status Arrive();  // a barrier over world_size ranks

  const int world_size_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int64_t generation_ = 0;
  bool aborted_ = false;
  std::vector<void*> ptrs_;
};

}  // namespace flashtick
