// ProcessGroupTrainer: multi-process data parallelism, one replica of the Trainer per
// process (docs/multi_gpu.md, multi-process): rank r of R takes the sequences
// [r·B/R, (r+1)·B/R) of each global batch and sums its gradients with the other
// processes through a BucketedAllReducer: a HostAllReducer over a TcpReduceGroup on
// the CPU (bit for bit DataParallelTrainer's R-thread run), or NCCL (ncclCommInitRank)
// on a GPU. The ranks meet through the job's ProcessGroup. Every rank applies the same
// update and reports the same loss. A failed peer surfaces as the step's error
// (Unavailable or DeadlineExceeded from the collective); the process should then exit,
// which the surviving ranks see as a closed connection, so the whole job stops.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/backend.h"
#include "research/parallel/bucketed_all_reducer.h"
#include "research/parallel/process_group.h"
#include "trainer/trainer.h"

namespace flashtick {

struct ProcessGroupTrainerOptions {
  std::string device = "cpu";                // cpu | cuda
  int gpu = -1;                              // CUDA: the GPU; −1: the process group's local rank
  int cpu_threads = 1;                       // CPU: backend threads
  int64_t bucket_bytes = int64_t{25} << 20;  // PyTorch DDP's default bucket_cap_mb
  // A collective that makes no progress for this long fails with DeadlineExceeded: on
  // the CPU one that moves no byte; on CUDA one still pending on the GPU, when the
  // NCCL watchdog aborts the communicator (collective_watchdog.h).
  double collective_timeout_seconds = 300;
};

class ProcessGroupTrainer {
 public:
  // `group` (rendezvoused) must outlive the trainer. Every rank calls it with the same
  // config and options, so the replicas start identical.
  static absl::StatusOr<std::unique_ptr<ProcessGroupTrainer>> Create(
      const ModelConfig& config, const TrainerOptions& options,
      const ProcessGroupTrainerOptions& pg, ProcessGroup& group);

  // The replica on a caller-owned `backend` (outliving the trainer; CUDA: on GPU pg.gpu,
  // or the group's local rank), made by `make`: a new Trainer, or one loaded from the
  // checkpoint every rank reads (trainer/train_checkpoint.h), as
  // DataParallelTrainer::CreateOn's ReplicaFactory. `make` must give every rank the
  // same state. pg.device and pg.cpu_threads are the backend's and unused. Each call
  // builds its collective under a fresh key scope of the group (NextScope), so a job
  // may make one trainer after another (a sweep arm: one per fold).
  using ReplicaFactory = std::function<absl::StatusOr<std::unique_ptr<Trainer>>(Backend*)>;
  static absl::StatusOr<std::unique_ptr<ProcessGroupTrainer>> CreateOn(
      Backend* backend, const ProcessGroupTrainerOptions& pg, ProcessGroup& group,
      const ReplicaFactory& make);
  ~ProcessGroupTrainer();

  // The global batch (host ticks [B, T, F], labels [B, T]; B a multiple of the world
  // size), the same on every rank; this rank trains on its share. Stats are this
  // replica's, with the loss of the whole batch and tokens = B·T.
  absl::StatusOr<StepStats> TrainStep(absl::Span<const float> ticks,
                                      absl::Span<const int32_t> labels, int64_t B, int64_t T);

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  Trainer& trainer() { return *trainer_; }
  const BucketedAllReducer* reducer() const { return reducer_.get(); }  // null when R = 1

 private:
  ProcessGroupTrainer() = default;

  int rank_ = 0, world_size_ = 1;
  std::unique_ptr<Backend> backend_;  // Create's own; null with CreateOn
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<BucketedAllReducer> reducer_;
  bool broken_ = false;
};

}  // namespace flashtick
