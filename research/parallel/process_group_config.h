// ProcessGroupConfig: where this process stands in a multi-process data-parallel job,
// read the way torchrun and Kubeflow's PyTorchJob pass it (docs/multi_gpu.md,
// multi-process): RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and LOCAL_RANK from the
// environment; without RANK, JOB_COMPLETION_INDEX (how a Kubernetes Indexed Job
// numbers its pods) is the rank. Explicit flags override the environment.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

struct ProcessGroupConfig {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // the GPU index on this host (LOCAL_RANK; default: the rank)
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;  // torchrun's default; 0 on rank 0: pick a free one
};

// Values given on the command line; unset ones come from the environment.
struct ProcessGroupFlags {
  std::optional<int> rank, world_size, local_rank, master_port;
  std::optional<std::string> master_addr;
};

// The environment lookup (nullopt: unset); ProcessEnv() reads the real one.
using EnvLookup = std::function<std::optional<std::string>(absl::string_view name)>;
EnvLookup ProcessEnv();

// Flags, then the environment, then the defaults above; InvalidArgument naming the
// variable for a value that is not an integer or out of range (rank ∉ [0, world),
// port ∉ [0, 65535], port 0 on a rank other than 0).
absl::StatusOr<ProcessGroupConfig> ResolveProcessGroupConfig(const ProcessGroupFlags& flags,
                                                             const EnvLookup& env);

}  // namespace flashtick
