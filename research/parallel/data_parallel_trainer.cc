// DataParallelTrainer: replicas on threads, sharded batches, a watchdog on failures
// (research/parallel/data_parallel_trainer.h).
#include "research/parallel/data_parallel_trainer.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "research/parallel/global_batch.h"
#include "research/parallel/host_all_reducer.h"
#include "research/parallel/host_reduce_group.h"
#include "research/parallel/nccl_all_reducer.h"

namespace flashtick {

absl::StatusOr<std::unique_ptr<DataParallelTrainer>> DataParallelTrainer::Create(
    const ModelConfig& config, const TrainerOptions& options, const DataParallelOptions& dp) {
  if (dp.replicas < 1)
    return absl::InvalidArgumentError(absl::StrCat("replicas must be >= 1, got ", dp.replicas));
  if (dp.device != "cpu" && dp.device != "cuda")
    return absl::InvalidArgumentError(
        absl::StrCat("data-parallel device must be cpu or cuda, got '", dp.device, "'"));
  std::unique_ptr<DataParallelTrainer> t(new DataParallelTrainer());
  const int R = dp.replicas;
  if (dp.device == "cuda") {
    t->gpus_ = dp.gpus;
    if (t->gpus_.empty())
      for (int r = 0; r < R; ++r) t->gpus_.push_back(r);
    if (static_cast<int>(t->gpus_.size()) != R)
      return absl::InvalidArgumentError(
          absl::StrCat(R, " replicas need ", R, " GPUs, got a list of ", t->gpus_.size()));
  }
  for (int r = 0; r < R; ++r) {
    BackendOptions bo;
    bo.threads = dp.cpu_threads;
    if (dp.device == "cuda") bo.device_index = t->gpus_[r];
    ASSIGN_OR_RETURN(std::unique_ptr<Backend> be, CreateBackend(dp.device, bo));
    t->backends_.push_back(be.get());
    t->owned_backends_.push_back(std::move(be));
  }
  RETURN_IF_ERROR(t->Init(
      [&](Backend* be) { return Trainer::Create(config, options, be); }, dp.bucket_bytes));
  return t;
}

absl::StatusOr<std::unique_ptr<DataParallelTrainer>> DataParallelTrainer::CreateOn(
    const std::vector<Backend*>& backends, const std::vector<int>& gpus,
    const ReplicaFactory& make, int64_t bucket_bytes) {
  if (backends.empty()) return absl::InvalidArgumentError("data parallel: no backends");
  const bool cuda = backends[0]->device() == DeviceKind::kCuda;
  for (Backend* be : backends) {
    if (be == nullptr || (be->device() == DeviceKind::kCuda) != cuda)
      return absl::InvalidArgumentError("data parallel: replicas must all be CPU or all CUDA");
  }
  if (cuda && gpus.size() != backends.size())
    return absl::InvalidArgumentError(absl::StrCat("data parallel: ", backends.size(),
                                                   " CUDA backends but ", gpus.size(), " GPUs"));
  std::unique_ptr<DataParallelTrainer> t(new DataParallelTrainer());
  t->backends_ = backends;
  if (cuda) t->gpus_ = gpus;
  RETURN_IF_ERROR(t->Init(make, bucket_bytes));
  return t;
}

absl::Status DataParallelTrainer::Init(const ReplicaFactory& make, int64_t bucket_bytes) {
  const int R = static_cast<int>(backends_.size());
  for (int r = 0; r < R; ++r) {
    ASSIGN_OR_RETURN(std::unique_ptr<Trainer> tr, make(backends_[r]));
    trainers_.push_back(std::move(tr));
  }
  if (R == 1) return absl::OkStatus();  // one device: the plain Trainer, no reducer
  const ParamStore& store = trainers_[0]->params();
  const int64_t elements =
      std::max<int64_t>(1, bucket_bytes / static_cast<int64_t>(DTypeSize(store.dtype())));
  ASSIGN_OR_RETURN(BucketPlan plan, BucketPlan::Create(store.layout(), elements));
  if (gpus_.empty()) {
    auto group = std::make_shared<HostReduceGroup>(R);
    for (int r = 0; r < R; ++r) {
      ASSIGN_OR_RETURN(std::unique_ptr<HostAllReducer> red,
                       HostAllReducer::Create(group, r, backends_[r], plan));
      reducers_.push_back(std::move(red));
    }
  } else {
    ASSIGN_OR_RETURN(auto group, NcclAllReducer::CreateGroup(backends_, gpus_, plan));
    for (auto& red : group) reducers_.push_back(std::move(red));
  }
  for (int r = 0; r < R; ++r) trainers_[r]->set_all_reducer(reducers_[r].get());
  return absl::OkStatus();
}

DataParallelTrainer::~DataParallelTrainer() {
  // Reducers (NCCL streams, communicators) go before the trainers and backends they use.
  for (auto& t : trainers_) t->set_all_reducer(nullptr);
  reducers_.clear();
  trainers_.clear();
}

absl::StatusOr<StepStats> DataParallelTrainer::TrainStep(absl::Span<const float> ticks,
                                                         absl::Span<const int32_t> labels,
                                                         int64_t B, int64_t T) {
  if (broken_)
    return absl::FailedPreconditionError(
        "this data-parallel trainer was aborted after a replica failed; restart from a "
        "checkpoint");
  RETURN_IF_ERROR(CheckGlobalBatch(trainers_[0]->config(), ticks, labels, B, T, replicas()));
  const int R = replicas();
  if (R == 1) return trainers_[0]->TrainStep(ticks, labels, B, T);
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t Bs = B / R, F = trainers_[0]->config().features;
  std::vector<absl::StatusOr<StepStats>> results(R, absl::UnknownError("replica did not run"));
  std::mutex mu;
  std::condition_variable cv;
  int finished = 0, failed = 0;
  std::vector<std::thread> threads;
  for (int r = 0; r < R; ++r) {
    threads.emplace_back([&, r] {
      // Exceptions stay in the replica (one escaping a thread ends the process).
      absl::StatusOr<StepStats> res = absl::InternalError("replica did not run");
      try {
        res = trainers_[r]->TrainStep(ticks.subspan(r * Bs * T * F, Bs * T * F),
                                      labels.subspan(r * Bs * T, Bs * T), Bs, T);
      } catch (const std::bad_alloc&) {
        res = absl::ResourceExhaustedError("out of memory (std::bad_alloc) in a replica's step");
      } catch (const std::exception& e) {
        res = absl::InternalError(absl::StrCat("a replica's step threw: ", e.what()));
      }
      std::lock_guard<std::mutex> lock(mu);
      failed += !res.ok();
      results[r] = std::move(res);
      ++finished;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return finished == R || failed > 0; });
    // A failure every replica reaches together (a non-finite loss) finishes them all;
    // one that strands the others in a collective does not.
    const auto grace = std::chrono::duration<double>(kAbortGraceSeconds);
    if (!cv.wait_for(lock, grace, [&] { return finished == R; })) {
      broken_ = true;
      for (auto& red : reducers_) red->Abort();
    }
  }
  for (std::thread& th : threads) th.join();
  for (int r = 0; r < R; ++r) {
    if (!results[r].ok())
      return absl::Status(results[r].status().code(),
                          absl::StrCat("data-parallel replica ", r, " of ", R, ": ",
                                       results[r].status().message()));
  }
  StepStats st = *results[0];
  st.tokens = B * T;
  for (const auto& res : results) st.peak_memory_bytes = std::max(st.peak_memory_bytes, res->peak_memory_bytes);
  st.step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

}  // namespace flashtick
