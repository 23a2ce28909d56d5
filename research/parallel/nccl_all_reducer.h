// NcclAllReducer: a GradientAllReducer for one GPU per replica, one host thread each,
// with communicators from one ncclCommInitAll (single process). Overlap with the
// backward pass: when a bucket's tensors are final, an event recorded on the
// backend's stream (Backend::NativeStream) makes a separate communication stream wait
// for exactly the kernels that wrote them, and ncclAllReduce (sum, in place) runs on
// that stream while the backward keeps going on the compute stream with earlier
// layers. Finish makes the compute stream wait for the last sum, so the gradient norm
// and optimizer kernels read summed gradients; the host never blocks on a bucket.
// Multi-process (one replica per process, docs/multi_gpu.md): CreateRank joins the
// job's communicator through ncclCommInitRank with the ncclUniqueId rank 0 publishes
// in the job's TcpStore; a CollectiveWatchdog (collective_watchdog.h) then aborts the
// communicator when a collective stays pending past the job's collective timeout or
// NCCL reports an asynchronous error, so a dead peer ends the step with an error
// instead of a hang. Built without CUDA, CreateGroup and CreateRank return
// Unimplemented; NCCL itself is loaded at run time (research/parallel/nccl_library.h).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/backend.h"
#include "research/parallel/bucketed_all_reducer.h"
#include "research/parallel/collective_watchdog.h"
#include "research/parallel/nccl_library.h"

typedef struct CUevent_st* cudaEvent_t;

namespace flashtick {

class TcpStore;

class NcclAllReducer final : public BucketedAllReducer {
 public:
  static constexpr int kMaxHostScalars = 8;  // SumHost's capacity

  // Rank r sums for backends[r], a CUDA backend on GPU devices[r].
  static absl::StatusOr<std::vector<std::unique_ptr<NcclAllReducer>>> CreateGroup(
      const std::vector<Backend*>& backends, const std::vector<int>& devices,
      const BucketPlan& plan);
  // One process's replica, rank store.rank() of store.world_size(), on a CUDA backend
  // on GPU `device`. Rank 0 makes the id (ncclGetUniqueId) and sets it as
  // "<key_prefix>nccl/unique_id"; every rank reads it and calls ncclCommInitRank. A job
  // that makes several communicators (a trainer per fold) gives each its own prefix.
  static absl::StatusOr<std::unique_ptr<NcclAllReducer>> CreateRank(
      Backend* backend, int device, const BucketPlan& plan, TcpStore& store,
      absl::string_view key_prefix = "", double collective_timeout_seconds = 300);
  ~NcclAllReducer() override;

  absl::Status SumHost(absl::Span<double> values) override;
  void Abort() override;

 protected:
  absl::Status LaunchBucket(int bucket, void* data, int64_t count, DType dtype) override;
  absl::Status AwaitLaunched() override;

 private:
  NcclAllReducer(BucketPlan plan, int rank, int world_size)
      : BucketedAllReducer(std::move(plan), rank, world_size) {}
  absl::Status Init(Backend* backend, int device);
  // Why calls fail once the group was aborted: the watchdog's reason, or a replica's.
  absl::Status AbortedStatus() const;

  const nccl::NcclLibrary* lib_ = nullptr;
  nccl::ncclComm_t comm_ = nullptr;
  std::atomic<bool> aborted_{false};
  int device_ = 0;
  cudaStream_t compute_ = nullptr, comm_stream_ = nullptr;
  std::vector<cudaEvent_t> ready_;  // one per bucket, re-recorded every sum
  cudaEvent_t done_ = nullptr;
  double* scalars_ = nullptr;  // device [kMaxHostScalars]
  std::unique_ptr<CollectiveWatchdog> watchdog_;  // CreateRank's communicators only
};

}  // namespace flashtick
