// ProcessGroupTrainer: one replica per process (research/parallel/process_group_trainer.h).
#include "research/parallel/process_group_trainer.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "research/parallel/global_batch.h"
#include "research/parallel/host_all_reducer.h"
#include "research/parallel/nccl_all_reducer.h"
#include "research/parallel/tcp_reduce_group.h"

namespace flashtick {

absl::StatusOr<std::unique_ptr<ProcessGroupTrainer>> ProcessGroupTrainer::Create(
    const ModelConfig& config, const TrainerOptions& options, const ProcessGroupTrainerOptions& pg,
    ProcessGroup& group) {
  if (pg.device != "cpu" && pg.device != "cuda")
    return absl::InvalidArgumentError(
        absl::StrCat("data-parallel device must be cpu or cuda, got '", pg.device, "'"));
  BackendOptions bo;
  bo.threads = pg.cpu_threads;
  if (pg.device == "cuda") bo.device_index = pg.gpu >= 0 ? pg.gpu : group.config().local_rank;
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(pg.device, bo));
  ASSIGN_OR_RETURN(std::unique_ptr<ProcessGroupTrainer> t,
                   CreateOn(backend.get(), pg, group, [&](Backend* be) {
                     return Trainer::Create(config, options, be);
                   }));
  t->backend_ = std::move(backend);  // destroyed after the trainer (declared before it)
  return t;
}

absl::StatusOr<std::unique_ptr<ProcessGroupTrainer>> ProcessGroupTrainer::CreateOn(
    Backend* backend, const ProcessGroupTrainerOptions& pg, ProcessGroup& group,
    const ReplicaFactory& make) {
  if (backend == nullptr) return absl::InvalidArgumentError("process-group trainer: no backend");
  std::unique_ptr<ProcessGroupTrainer> t(new ProcessGroupTrainer());
  t->rank_ = group.rank();
  t->world_size_ = group.world_size();
  // The replica first (a checkpoint load may take a while), then the collective, whose
  // set-up waits for every rank: no rank trains before every rank has its replica.
  ASSIGN_OR_RETURN(t->trainer_, make(backend));
  if (t->world_size_ == 1) return t;  // one process: the plain Trainer, no reducer
  const std::string scope = group.NextScope("trainer");
  const ParamStore& store = t->trainer_->params();
  const int64_t elements =
      std::max<int64_t>(1, pg.bucket_bytes / static_cast<int64_t>(DTypeSize(store.dtype())));
  ASSIGN_OR_RETURN(BucketPlan plan, BucketPlan::Create(store.layout(), elements));
  if (backend->device() != DeviceKind::kCuda) {
    ASSIGN_OR_RETURN(std::unique_ptr<TcpReduceGroup> tcp,
                     TcpReduceGroup::Create(group.store(), pg.collective_timeout_seconds, scope));
    ASSIGN_OR_RETURN(t->reducer_,
                     HostAllReducer::Create(std::move(tcp), t->rank_, backend, std::move(plan)));
  } else {
    const int gpu = pg.gpu >= 0 ? pg.gpu : group.config().local_rank;
    ASSIGN_OR_RETURN(t->reducer_,
                     NcclAllReducer::CreateRank(backend, gpu, plan, group.store(), scope,
                                                pg.collective_timeout_seconds));
  }
  t->trainer_->set_all_reducer(t->reducer_.get());
  return t;
}

ProcessGroupTrainer::~ProcessGroupTrainer() {
  // The reducer (its sockets or NCCL communicator) goes before the trainer and backend.
  if (trainer_ != nullptr) trainer_->set_all_reducer(nullptr);
  reducer_.reset();
  trainer_.reset();
}

absl::StatusOr<StepStats> ProcessGroupTrainer::TrainStep(absl::Span<const float> ticks,
                                                         absl::Span<const int32_t> labels,
                                                         int64_t B, int64_t T) {
  if (broken_)
    return absl::FailedPreconditionError(
        absl::StrCat("rank ", rank_,
                     ": a collective failed in an earlier step, so this replica may differ "
                     "from the others; restart the job from a checkpoint"));
  RETURN_IF_ERROR(CheckGlobalBatch(trainer_->config(), ticks, labels, B, T, world_size_));
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t Bs = B / world_size_, F = trainer_->config().features;
  absl::StatusOr<StepStats> st = trainer_->TrainStep(ticks.subspan(rank_ * Bs * T * F, Bs * T * F),
                                                     labels.subspan(rank_ * Bs * T, Bs * T), Bs, T);
  if (!st.ok()) {
    // Every rank refuses a non-finite step together (its loss is summed first); any
    // other failure may have left this replica apart from the others.
    if (!absl::IsInternal(st.status())) broken_ = true;
    return absl::Status(st.status().code(), absl::StrCat("data-parallel rank ", rank_, " of ",
                                                         world_size_, ": ", st.status().message()));
  }
  st->tokens = B * T;
  st->step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

}  // namespace flashtick
