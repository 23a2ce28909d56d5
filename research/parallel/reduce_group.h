// ReduceGroup: the host collective under HostAllReducer, an all-reduce (sum) of fp32 or
// fp64 host buffers over world_size ranks. Two implementations give the same bits:
// HostReduceGroup (threads of one process) and TcpReduceGroup (one process per rank,
// over TCP). Both sum each element in rank order with fp64 accumulation, so every rank
// gets bit-identical sums and a run over processes equals the run over threads
// (docs/multi_gpu.md).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/tensor.h"

namespace flashtick {

class ReduceGroup {
 public:
  virtual ~ReduceGroup() = default;

  virtual int world_size() const = 0;
  // Called by rank `rank` with its host buffer of `count` fp32 or fp64 values (the same
  // count and dtype on every rank); on return the buffer holds the sum over ranks.
  virtual absl::Status AllReduceSum(int rank, void* data, int64_t count, DType dtype) = 0;
  // Makes ranks blocked in AllReduceSum give up with Aborted; later calls fail.
  virtual void Abort() = 0;
};

}  // namespace flashtick
