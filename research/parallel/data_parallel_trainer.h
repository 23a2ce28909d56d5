// DataParallelTrainer: one training run (one sweep arm) data-parallel over R replicas
// of the Trainer, one host thread each: R GPUs of one host summing through NCCL
// (NcclAllReducer), or R CPU backends summing through a HostAllReducer (how CI runs
// data parallelism). Every replica starts from the same seed, takes the sequences
// [r·B/R, (r+1)·B/R) of each global batch, and applies the update of the global batch
// (trainer/trainer.h set_all_reducer), so the loss curve equals one trainer's on
// the whole batch up to the order of floating-point sums (tests/parallel/).
// Errors: a bad global batch is refused before any replica starts; when a replica
// fails and the others do not finish within kAbortGraceSeconds (they wait in a
// collective), the group is aborted and this trainer refuses further steps.
// One replica per process instead (multi-process jobs): ProcessGroupTrainer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/backend.h"
#include "trainer/trainer.h"
#include "research/parallel/bucketed_all_reducer.h"

namespace flashtick {

struct DataParallelOptions {
  std::string device = "cpu";  // cpu | cuda
  int replicas = 2;            // R; on CUDA one GPU each
  std::vector<int> gpus;       // CUDA: the GPU of each replica; empty = 0..R−1
  int cpu_threads = 1;         // CPU: backend threads per replica
  // PyTorch DDP's default bucket_cap_mb (25 MiB) of master-dtype gradient.
  int64_t bucket_bytes = int64_t{25} << 20;
};

class DataParallelTrainer {
 public:
  static constexpr double kAbortGraceSeconds = 10.0;

  static absl::StatusOr<std::unique_ptr<DataParallelTrainer>> Create(
      const ModelConfig& config, const TrainerOptions& options, const DataParallelOptions& dp);

  // Replicas on caller-owned backends that outlive this trainer (all CPU, or one CUDA
  // backend per GPU of `gpus`), each made by `make` on its backend: a new Trainer, or
  // one loaded from a checkpoint (trainer/train_checkpoint.h). `make` must give
  // every replica the same state.
  using ReplicaFactory = std::function<absl::StatusOr<std::unique_ptr<Trainer>>(Backend*)>;
  static absl::StatusOr<std::unique_ptr<DataParallelTrainer>> CreateOn(
      const std::vector<Backend*>& backends, const std::vector<int>& gpus,
      const ReplicaFactory& make, int64_t bucket_bytes = int64_t{25} << 20);
  ~DataParallelTrainer();

  // The global batch (host ticks [B, T, F], labels [B, T]); B a multiple of R. The
  // stats are replica 0's, with tokens, step_seconds and peak memory of the whole step.
  absl::StatusOr<StepStats> TrainStep(absl::Span<const float> ticks,
                                      absl::Span<const int32_t> labels, int64_t B, int64_t T);

  int replicas() const { return static_cast<int>(trainers_.size()); }
  Trainer& replica(int r) { return *trainers_[r]; }
  const BucketedAllReducer& reducer(int r) const { return *reducers_[r]; }
  const std::vector<int>& gpus() const { return gpus_; }

 private:
  DataParallelTrainer() = default;
  absl::Status Init(const ReplicaFactory& make, int64_t bucket_bytes);

  std::vector<std::unique_ptr<Backend>> owned_backends_;
  std::vector<Backend*> backends_;
  std::vector<std::unique_ptr<Trainer>> trainers_;
  std::vector<std::unique_ptr<BucketedAllReducer>> reducers_;
  std::vector<int> gpus_;
  bool broken_ = false;
};

}  // namespace flashtick
