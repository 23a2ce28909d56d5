// Which attention implementation runs a shape on the CUDA backend: our Flash kernels
// (kernels/cuda/attention/) or cuDNN's fused SDPA (kernels/cuda/attention/cudnn_sdpa.cc).
// Neither wins everywhere (docs/kernels/cudnn.md), so in `auto` mode the first call of
// a shape bucket times both and keeps the faster one, in memory and in a small JSON
// file keyed by the GPU, driver and cuDNN version that produced the timings.
//
// This is plain C++ (no CUDA): the CUDA launcher supplies the timings through a
// callback, so bucketing, the cache and the choice are unit-tested on the CPU with
// fake timings (tests/attention_dispatch).
//
// Both implementations write the same forward outputs (O and the natural-log
// log-sum-exp L, fp32 [B, H, T]; kernels/ops/attention.h), so forward and backward
// are decided independently and a backward of either consumes a forward of either.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/ops/attention.h"
#include "kernels/tensor.h"

namespace flashtick {

// kAuto: measure per bucket; kFlash: always ours; kCudnn: cuDNN where it is built and
// accepts the shape, else ours (said once in the log). kFlashSm90a: ours, with the
// forward and backward on the sm_90a wgmma kernels wherever they run (forward D = 64 or
// 128, backward D = 64, on a compute-capability 9.0 GPU:
// kernels/cuda/attention/sm90/flash_fwd_sm90.h) and our FA2 kernels elsewhere; asked
// for by name only, never chosen by kAuto until its GPU parity and timings are in
// (docs/kernels/hopper.md).
enum class AttentionImpl { kAuto, kFlash, kCudnn, kFlashSm90a };

// "auto", "flash", "cudnn", "flash_sm90a".
const char* AttentionImplName(AttentionImpl impl);
// Accepts "auto", "flash" (also "ours"), "cudnn" and "flash_sm90a", case-sensitive.
absl::StatusOr<AttentionImpl> ParseAttentionImpl(std::string_view s);

// The hardware and libraries a timing was taken on. A cache entry is reused only when
// all three match: a driver or cuDNN upgrade can move the crossover.
struct AttentionEnvironment {
  std::string gpu;   // device name, e.g. "NVIDIA H200"
  int driver = 0;    // cudaDriverGetVersion, e.g. 13000
  int64_t cudnn = 0; // cudnnGetVersion, e.g. 91900; 0 without cuDNN
  std::string Key() const;  // "NVIDIA H200|driver=13000|cudnn=91900"
};

enum class AttentionDirection { kFwd, kBwd };

// A shape bucket: shapes in one bucket share a winner. N and B·H round up to powers
// of two (N at least 128, one tile of either implementation); everything else exact.
struct AttentionBucket {
  AttentionDirection dir = AttentionDirection::kFwd;
  DType dtype = DType::kBF16;
  int64_t d = 0;
  bool causal = true;
  int64_t group = 1;  // H / Hkv (GQA)
  int64_t n_bucket = 0;
  int64_t bh_bucket = 0;
  std::string Key() const;  // "fwd|bf16|d64|causal|g1|n32768|bh16"
  bool operator<(const AttentionBucket& o) const { return Key() < o.Key(); }
};

// The smallest power of two ≥ max(x, floor).
int64_t AttentionBucketUp(int64_t x, int64_t floor);
AttentionBucket MakeAttentionBucket(AttentionDirection dir, DType dtype, const AttentionShape& s,
                                    bool causal);

struct AttentionChoice {
  AttentionImpl impl = AttentionImpl::kFlash;  // kFlash or kCudnn, never kAuto
  // "forced", "measured", "cached", "cudnn_unavailable", "cudnn_failed", "no_timer"
  std::string reason;
};

// One measured bucket.
struct AttentionCacheEntry {
  std::string env;     // AttentionEnvironment::Key()
  std::string bucket;  // AttentionBucket::Key()
  AttentionImpl winner = AttentionImpl::kFlash;
  double flash_ms = 0, cudnn_ms = 0;
};

// Serialises the entries to the cache file's JSON:
//   {"format": "flashtick_attention_cache_v1", "entries": [{"env", "bucket", "winner",
//    "flash_ms", "cudnn_ms"}, ...]}
std::string AttentionCacheToJson(const std::vector<AttentionCacheEntry>& entries);
// Parses that JSON; an unknown format or malformed entry is InvalidArgument.
absl::StatusOr<std::vector<AttentionCacheEntry>> AttentionCacheFromJson(std::string_view json);

// A process-wide mode set by a command-line flag (--attention-impl), which wins over
// the FLASHTICK_ATTENTION_IMPL environment variable on the CUDA backend. Harmless on a
// build without CUDA (nothing reads it). nullopt clears it. Thread-safe.
void SetAttentionImplOverride(std::optional<AttentionImpl> impl);
std::optional<AttentionImpl> AttentionImplOverride();

class AttentionDispatcher {
 public:
  struct Options {
    AttentionImpl mode = AttentionImpl::kAuto;
    std::string cache_path;  // empty: decisions live in memory only
    AttentionEnvironment env;
  };
  // Median milliseconds of one call of `impl` (kFlash or kCudnn) on the caller's shape.
  using Timer = std::function<absl::StatusOr<double>(AttentionImpl impl)>;
  using Logger = std::function<void(const std::string&)>;

  // Loads the cache file when there is one (a missing file is an empty cache; a
  // corrupt one is logged and replaced on the next save). `log` defaults to stderr.
  explicit AttentionDispatcher(Options options, Logger log = nullptr);

  // The implementation for `bucket`. `cudnn_supported`: cuDNN is built, loaded and
  // accepts this exact shape. `timer` may be empty (e.g. during CUDA graph capture,
  // where nothing can be timed): an unmeasured bucket then runs ours, not cached.
  // Thread-safe; measurement happens under the lock, once per bucket.
  AttentionChoice Choose(const AttentionBucket& bucket, bool cudnn_supported, const Timer& timer);
  // The same, asking `cudnn_supported` only when the answer matters: not when ours is
  // forced or already the bucket's measured winner. (On CUDA the question builds a
  // cuDNN graph for the exact shape, which a bucket won by ours should not pay for.)
  AttentionChoice Choose(const AttentionBucket& bucket, const std::function<bool()>& cudnn_supported,
                         const Timer& timer);

  AttentionImpl mode() const;
  void set_mode(AttentionImpl mode);
  const AttentionEnvironment& env() const { return options_.env; }
  // The measured entry for a bucket in this environment, if any.
  std::optional<AttentionCacheEntry> Lookup(const AttentionBucket& bucket) const;
  // Writes every known entry (this environment's and others' read from the file) to
  // the cache path, through a temporary file and a rename so readers never see half.
  absl::Status Save() const;

 private:
  void LogOnce(const std::string& key, const std::string& message);
  absl::Status SaveLocked() const;

  Options options_;
  Logger log_;
  mutable std::mutex mu_;
  std::map<std::string, AttentionCacheEntry> mine_;     // this env's entries, by bucket key
  std::vector<AttentionCacheEntry> others_;             // other environments', kept on save
  std::map<std::string, AttentionImpl> unmeasurable_;   // failed cuDNN runs: not persisted
  std::set<std::string> logged_;
};

}  // namespace flashtick
