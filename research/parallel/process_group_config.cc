// ProcessGroupConfig: flags over torchrun's environment (research/parallel/process_group_config.h).
#include "research/parallel/process_group_config.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {
namespace {

// The flag if given, else the first set variable of `names` parsed as an integer.
absl::StatusOr<std::optional<int>> IntSetting(const std::optional<int>& flag,
                                              std::initializer_list<const char*> names,
                                              const EnvLookup& env) {
  if (flag.has_value()) return flag;
  for (const char* name : names) {
    std::optional<std::string> v = env(name);
    if (!v.has_value()) continue;
    int out = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*v), &out))
      return absl::InvalidArgumentError(absl::StrCat(name, "='", *v, "' is not an integer"));
    return std::optional<int>(out);
  }
  return std::optional<int>();
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](absl::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr || v[0] == '\0') return std::nullopt;
    return std::string(v);
  };
}

absl::StatusOr<ProcessGroupConfig> ResolveProcessGroupConfig(const ProcessGroupFlags& flags,
                                                             const EnvLookup& env) {
  ProcessGroupConfig c;
  ASSIGN_OR_RETURN(std::optional<int> world, IntSetting(flags.world_size, {"WORLD_SIZE"}, env));
  ASSIGN_OR_RETURN(std::optional<int> rank,
                   IntSetting(flags.rank, {"RANK", "JOB_COMPLETION_INDEX"}, env));
  ASSIGN_OR_RETURN(std::optional<int> local, IntSetting(flags.local_rank, {"LOCAL_RANK"}, env));
  ASSIGN_OR_RETURN(std::optional<int> port, IntSetting(flags.master_port, {"MASTER_PORT"}, env));
  if (world.has_value()) c.world_size = *world;
  if (rank.has_value()) c.rank = *rank;
  c.local_rank = local.value_or(c.rank);
  if (port.has_value()) c.master_port = *port;
  if (flags.master_addr.has_value()) {
    c.master_addr = *flags.master_addr;
  } else if (std::optional<std::string> addr = env("MASTER_ADDR"); addr.has_value()) {
    c.master_addr = *addr;
  }
  if (c.world_size < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("world size (WORLD_SIZE) must be >= 1, got ", c.world_size));
  if (c.rank < 0 || c.rank >= c.world_size)
    return absl::InvalidArgumentError(absl::StrCat("rank (RANK or JOB_COMPLETION_INDEX) ", c.rank,
                                                   " is not in [0, ", c.world_size, ")"));
  if (c.local_rank < 0)
    return absl::InvalidArgumentError(absl::StrCat("LOCAL_RANK must be >= 0, got ", c.local_rank));
  if (c.master_port < 0 || c.master_port > 65535)
    return absl::InvalidArgumentError(
        absl::StrCat("master port (MASTER_PORT) ", c.master_port, " is not in [0, 65535]"));
  if (c.master_port == 0 && c.rank != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "master port 0 lets rank 0 pick a free port; rank ", c.rank, " needs the port it picked"));
  if (c.master_addr.empty()) return absl::InvalidArgumentError("MASTER_ADDR is empty");
  return c;
}

}  // namespace flashtick
