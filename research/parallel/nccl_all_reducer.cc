// NcclAllReducer: event-ordered ncclAllReduce per bucket on a communication stream
// (research/parallel/nccl_all_reducer.h).
#include "research/parallel/nccl_all_reducer.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "research/parallel/tcp_store.h"

#if defined(FLASHTICK_WITH_CUDA)
#include "kernels/cuda/cuda_check.h"

namespace flashtick {

absl::StatusOr<std::vector<std::unique_ptr<NcclAllReducer>>> NcclAllReducer::CreateGroup(
    const std::vector<Backend*>& backends, const std::vector<int>& devices,
    const BucketPlan& plan) {
  const int n = static_cast<int>(backends.size());
  if (n < 1 || devices.size() != backends.size())
    return absl::InvalidArgumentError(absl::StrCat("NCCL group: ", backends.size(),
                                                   " backends for ", devices.size(), " GPUs"));
  for (int r = 0; r < n; ++r) {
    if (backends[r] == nullptr || backends[r]->NativeStream() == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(
          "NCCL group: replica ", r, " is not on a CUDA backend (the CPU uses HostAllReducer)"));
  }
  ASSIGN_OR_RETURN(const nccl::NcclLibrary* lib, nccl::NcclLibrary::Get());
  std::vector<nccl::ncclComm_t> comms(n, nullptr);
  RETURN_IF_ERROR(lib->Check(lib->CommInitAll(comms.data(), n, devices.data()), "ncclCommInitAll"));
  std::vector<std::unique_ptr<NcclAllReducer>> group;
  for (int r = 0; r < n; ++r) {
    group.emplace_back(new NcclAllReducer(plan, r, n));
    group.back()->lib_ = lib;
    group.back()->comm_ = comms[r];  // owned from here (destroyed by the reducer)
  }
  for (int r = 0; r < n; ++r) RETURN_IF_ERROR(group[r]->Init(backends[r], devices[r]));
  return group;
}

absl::StatusOr<std::unique_ptr<NcclAllReducer>> NcclAllReducer::CreateRank(
    Backend* backend, int device, const BucketPlan& plan, TcpStore& store,
    absl::string_view key_prefix, double collective_timeout_seconds) {
  if (backend == nullptr || backend->NativeStream() == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(
        "NCCL rank ", store.rank(), " is not on a CUDA backend (the CPU uses TcpReduceGroup)"));
  ASSIGN_OR_RETURN(const nccl::NcclLibrary* lib, nccl::NcclLibrary::Get());
  const std::string id_key = absl::StrCat(key_prefix, "nccl/unique_id");
  nccl::ncclUniqueId id;
  if (store.rank() == 0) {
    RETURN_IF_ERROR(lib->Check(lib->GetUniqueId(&id), "ncclGetUniqueId"));
    RETURN_IF_ERROR(store.Set(id_key, absl::string_view(id.internal, sizeof(id.internal))));
  } else {
    ASSIGN_OR_RETURN(std::string bytes, store.Get(id_key));
    if (bytes.size() != sizeof(id.internal))
      return absl::DataLossError(absl::StrCat("NCCL unique id from the store has ", bytes.size(),
                                              " bytes, not ", sizeof(id.internal)));
    std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
  }
  RETURN_IF_CUDA_ERROR(cudaSetDevice(device));
  std::unique_ptr<NcclAllReducer> red(new NcclAllReducer(plan, store.rank(), store.world_size()));
  red->lib_ = lib;
  RETURN_IF_ERROR(lib->Check(lib->CommInitRank(&red->comm_, store.world_size(), id, store.rank()),
                             "ncclCommInitRank"));
  RETURN_IF_ERROR(red->Init(backend, device));
  NcclAllReducer* raw = red.get();
  CollectiveProbes probes;
  probes.pending = [raw] {  // the last collective recorded done_ and has not reached it
    cudaSetDevice(raw->device_);
    return cudaEventQuery(raw->done_) == cudaErrorNotReady;
  };
  probes.async_error = [raw]() -> absl::Status {
    if (raw->lib_->CommGetAsyncError == nullptr) return absl::OkStatus();
    nccl::ncclResult_t async = nccl::ncclSuccess;
    absl::Status called =
        raw->lib_->Check(raw->lib_->CommGetAsyncError(raw->comm_, &async), "ncclCommGetAsyncError");
    if (!called.ok()) return called;
    if (async == nccl::ncclSuccess || async == nccl::ncclInProgress) return absl::OkStatus();
    return raw->lib_->Check(async, "the communicator (asynchronous error)");
  };
  probes.abort = [raw] { raw->Abort(); };
  red->watchdog_ = std::make_unique<CollectiveWatchdog>(
      std::move(probes), absl::StrCat("NCCL rank ", store.rank(), " of ", store.world_size()),
      collective_timeout_seconds);
  return red;
}

absl::Status NcclAllReducer::AbortedStatus() const {
  if (watchdog_ != nullptr && watchdog_->fired()) return watchdog_->status();
  return absl::AbortedError("NCCL group aborted: another replica failed");
}

absl::Status NcclAllReducer::Init(Backend* backend, int device) {
  device_ = device;
  compute_ = static_cast<cudaStream_t>(backend->NativeStream());
  RETURN_IF_CUDA_ERROR(cudaSetDevice(device_));
  RETURN_IF_CUDA_ERROR(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking));
  ready_.assign(plan().buckets().size(), nullptr);
  for (cudaEvent_t& e : ready_)
    RETURN_IF_CUDA_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  RETURN_IF_CUDA_ERROR(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  RETURN_IF_CUDA_ERROR(cudaMalloc(&scalars_, kMaxHostScalars * sizeof(double)));
  return absl::OkStatus();
}

NcclAllReducer::~NcclAllReducer() {
  watchdog_.reset();  // its thread reads the events and the communicator freed below
  if (cudaSetDevice(device_) != cudaSuccess) return;
  if (comm_stream_ != nullptr) cudaStreamSynchronize(comm_stream_);
  if (comm_ != nullptr && !aborted_) lib_->CommDestroy(comm_);
  for (cudaEvent_t e : ready_)
    if (e != nullptr) cudaEventDestroy(e);
  if (done_ != nullptr) cudaEventDestroy(done_);
  if (scalars_ != nullptr) cudaFree(scalars_);
  if (comm_stream_ != nullptr) cudaStreamDestroy(comm_stream_);
}

void NcclAllReducer::Abort() {
  if (comm_ != nullptr && !aborted_.exchange(true)) lib_->CommAbort(comm_);
}

absl::Status NcclAllReducer::LaunchBucket(int bucket, void* data, int64_t count, DType dtype) {
  if (aborted_) return AbortedStatus();
  RETURN_IF_CUDA_ERROR(cudaSetDevice(device_));
  // The sum may start once the compute stream has written every tensor of the bucket.
  RETURN_IF_CUDA_ERROR(cudaEventRecord(ready_[bucket], compute_));
  RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(comm_stream_, ready_[bucket], 0));
  const nccl::ncclDataType_t type = dtype == DType::kF64 ? nccl::ncclFloat64 : nccl::ncclFloat32;
  return lib_->Check(lib_->AllReduce(data, data, static_cast<size_t>(count), type, nccl::ncclSum,
                                     comm_, comm_stream_),
                     "ncclAllReduce (gradient bucket)");
}

absl::Status NcclAllReducer::AwaitLaunched() {
  RETURN_IF_CUDA_ERROR(cudaSetDevice(device_));
  RETURN_IF_CUDA_ERROR(cudaEventRecord(done_, comm_stream_));
  if (watchdog_ != nullptr) watchdog_->Launched();
  RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(compute_, done_, 0));
  return absl::OkStatus();
}

absl::Status NcclAllReducer::SumHost(absl::Span<double> values) {
  if (values.size() > static_cast<size_t>(kMaxHostScalars))
    return absl::InvalidArgumentError(absl::StrCat("NCCL SumHost takes at most ",
                                                   kMaxHostScalars, " values, got ", values.size()));
  if (aborted_) return AbortedStatus();
  const size_t bytes = values.size() * sizeof(double);
  RETURN_IF_CUDA_ERROR(cudaSetDevice(device_));
  RETURN_IF_CUDA_ERROR(
      cudaMemcpyAsync(scalars_, values.data(), bytes, cudaMemcpyHostToDevice, comm_stream_));
  RETURN_IF_ERROR(lib_->Check(lib_->AllReduce(scalars_, scalars_, values.size(), nccl::ncclFloat64,
                                              nccl::ncclSum, comm_, comm_stream_),
                              "ncclAllReduce (host scalars)"));
  RETURN_IF_CUDA_ERROR(
      cudaMemcpyAsync(values.data(), scalars_, bytes, cudaMemcpyDeviceToHost, comm_stream_));
  if (watchdog_ != nullptr) {  // the wait below is where a dead peer would hang us
    RETURN_IF_CUDA_ERROR(cudaEventRecord(done_, comm_stream_));
    watchdog_->Launched();
  }
  const cudaError_t synced = cudaStreamSynchronize(comm_stream_);
  if (aborted_) return AbortedStatus();  // the watchdog ended the wait: say why
  RETURN_IF_CUDA_ERROR(synced);
  return absl::OkStatus();
}

}  // namespace flashtick

#else  // !FLASHTICK_WITH_CUDA

namespace flashtick {

absl::StatusOr<std::vector<std::unique_ptr<NcclAllReducer>>> NcclAllReducer::CreateGroup(
    const std::vector<Backend*>&, const std::vector<int>&, const BucketPlan&) {
  return absl::UnimplementedError(
      "this flashtick was built without CUDA (FLASHTICK_WITH_CUDA=OFF): no NCCL data "
      "parallelism; the CPU backend uses HostAllReducer");
}
absl::StatusOr<std::unique_ptr<NcclAllReducer>> NcclAllReducer::CreateRank(Backend*, int,
                                                                          const BucketPlan&,
                                                                          TcpStore&,
                                                                          absl::string_view,
                                                                          double) {
  return absl::UnimplementedError(
      "this flashtick was built without CUDA (FLASHTICK_WITH_CUDA=OFF): no NCCL data "
      "parallelism; the CPU backend uses TcpReduceGroup between processes");
}
NcclAllReducer::~NcclAllReducer() = default;
void NcclAllReducer::Abort() {}
absl::Status NcclAllReducer::SumHost(absl::Span<double>) {
  return absl::UnimplementedError("built without CUDA");
}
absl::Status NcclAllReducer::LaunchBucket(int, void*, int64_t, DType) {
  return absl::UnimplementedError("built without CUDA");
}
absl::Status NcclAllReducer::AwaitLaunched() { return absl::UnimplementedError("built without CUDA"); }

}  // namespace flashtick

#endif
