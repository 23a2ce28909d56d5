// NcclLibrary: NCCL loaded at run time with dlopen, so the NCCL path compiles
// everywhere (CI and this machine have no libnccl-dev) and runs where the library
// exists (the GPU machine has it only as the pip package nvidia-nccl-cu13). We
// declare just the ABI we call; types and enum values are those of NCCL's public
// header nccl.h (src/nccl.h.in in github.com/NVIDIA/nccl: ncclResult_t, ncclRedOp_t,
// ncclDataType_t, NCCL_UNIQUE_ID_BYTES = 128), stable across NCCL 2.x.
// Library path: $FLASHTICK_NCCL_LIBRARY if set, else "libnccl.so.2" on the loader's
// search path. Loaded once per process; never unloaded.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

typedef struct CUstream_st* cudaStream_t;

namespace flashtick::nccl {

typedef struct ncclComm* ncclComm_t;  // opaque
struct ncclUniqueId {                 // for multi-process bootstrap (ncclCommInitRank)
  char internal[128];
};
static_assert(sizeof(ncclUniqueId) == 128, "NCCL_UNIQUE_ID_BYTES");

enum ncclResult_t : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};
enum ncclRedOp_t : int { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 };
enum ncclDataType_t : int {
  ncclInt32 = 2,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
};

class NcclLibrary {
 public:
  // The process-wide library; the first call loads it. FailedPrecondition, saying how
  // to get it, when it cannot be loaded or lacks a symbol.
  static absl::StatusOr<const NcclLibrary*> Get();

  int version() const { return version_; }  // e.g. 22703 for 2.27.3
  const std::string& path() const { return path_; }
  // absl::Status of an NCCL result, naming the call.
  absl::Status Check(ncclResult_t r, const char* what) const;

  ncclResult_t (*CommInitAll)(ncclComm_t* comms, int ndev, const int* devlist) = nullptr;
  // Multi-process: rank 0 makes the id, every rank joins with it (docs/multi_gpu.md).
  ncclResult_t (*GetUniqueId)(ncclUniqueId* unique_id) = nullptr;
  ncclResult_t (*CommInitRank)(ncclComm_t* comm, int nranks, ncclUniqueId comm_id,
                               int rank) = nullptr;
  ncclResult_t (*CommDestroy)(ncclComm_t comm) = nullptr;
  ncclResult_t (*CommAbort)(ncclComm_t comm) = nullptr;
  // Optional (null when the library lacks it): an error the communicator found on its
  // own, e.g. a peer's connection closed (the collective watchdog polls it).
  ncclResult_t (*CommGetAsyncError)(ncclComm_t comm, ncclResult_t* async_error) = nullptr;
  ncclResult_t (*AllReduce)(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t stream) = nullptr;
  ncclResult_t (*GroupStart)() = nullptr;
  ncclResult_t (*GroupEnd)() = nullptr;
  const char* (*GetErrorString)(ncclResult_t result) = nullptr;
  ncclResult_t (*GetVersion)(int* version) = nullptr;

 private:
  NcclLibrary() = default;
  static absl::StatusOr<NcclLibrary*> Load();
  std::string path_;
  int version_ = 0;
};

}  // namespace flashtick::nccl
