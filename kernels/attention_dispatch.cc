// The attention implementation choice (kernels/attention_dispatch.h): buckets, the
// on-disk cache of measured winners and the decision. No CUDA here.
#include "kernels/attention_dispatch.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace flashtick {
namespace {

constexpr const char* kCacheFormat = "flashtick_attention_cache_v1";

std::atomic<int> g_override{-1};  // -1: none; else an AttentionImpl

}  // namespace

const char* AttentionImplName(AttentionImpl impl) {
  switch (impl) {
    case AttentionImpl::kAuto: return "auto";
    case AttentionImpl::kFlash: return "flash";
    case AttentionImpl::kCudnn: return "cudnn";
    case AttentionImpl::kFlashSm90a: return "flash_sm90a";
  }
  return "?";
}

absl::StatusOr<AttentionImpl> ParseAttentionImpl(std::string_view s) {
  if (s == "auto") return AttentionImpl::kAuto;
  if (s == "flash" || s == "ours") return AttentionImpl::kFlash;
  if (s == "cudnn") return AttentionImpl::kCudnn;
  if (s == "flash_sm90a") return AttentionImpl::kFlashSm90a;
  return absl::InvalidArgumentError(absl::StrCat(
      "attention implementation must be auto, flash, cudnn or flash_sm90a; got '", std::string(s), "'"));
}

void SetAttentionImplOverride(std::optional<AttentionImpl> impl) {
  g_override.store(impl ? static_cast<int>(*impl) : -1);
}

std::optional<AttentionImpl> AttentionImplOverride() {
  const int v = g_override.load();
  if (v < 0) return std::nullopt;
  return static_cast<AttentionImpl>(v);
}

std::string AttentionEnvironment::Key() const {
  return absl::StrCat(gpu, "|driver=", driver, "|cudnn=", cudnn);
}

std::string AttentionBucket::Key() const {
  return absl::StrCat(dir == AttentionDirection::kFwd ? "fwd" : "bwd", "|", DTypeName(dtype), "|d",
                      d, "|", causal ? "causal" : "full", "|g", group, "|n", n_bucket, "|bh",
                      bh_bucket);
}

int64_t AttentionBucketUp(int64_t x, int64_t floor) {
  int64_t p = 1;
  const int64_t want = std::max(x, floor);
  while (p < want) p <<= 1;
  return p;
}

AttentionBucket MakeAttentionBucket(AttentionDirection dir, DType dtype, const AttentionShape& s,
                                    bool causal) {
  AttentionBucket b;
  b.dir = dir;
  b.dtype = dtype;
  b.d = s.D;
  b.causal = causal;
  b.group = s.Hkv > 0 ? s.H / s.Hkv : 1;
  // 128 rows: below one query tile of either implementation the launch overhead
  // dominates and all short sequences behave alike.
  b.n_bucket = AttentionBucketUp(s.T, 128);
  b.bh_bucket = AttentionBucketUp(s.B * s.H, 1);
  return b;
}

std::string AttentionCacheToJson(const std::vector<AttentionCacheEntry>& entries) {
  nlohmann::json j;
  j["format"] = kCacheFormat;
  j["entries"] = nlohmann::json::array();
  for (const auto& e : entries) {
    j["entries"].push_back({{"env", e.env},
                            {"bucket", e.bucket},
                            {"winner", AttentionImplName(e.winner)},
                            {"flash_ms", e.flash_ms},
                            {"cudnn_ms", e.cudnn_ms}});
  }
  return j.dump(1) + "\n";
}

absl::StatusOr<std::vector<AttentionCacheEntry>> AttentionCacheFromJson(std::string_view json) {
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return absl::InvalidArgumentError("attention cache: not a JSON object");
  if (!j.contains("format") || j["format"] != kCacheFormat)
    return absl::InvalidArgumentError(absl::StrCat("attention cache: format is not ", kCacheFormat));
  if (!j.contains("entries") || !j["entries"].is_array())
    return absl::InvalidArgumentError("attention cache: no entries array");
  std::vector<AttentionCacheEntry> out;
  for (const auto& e : j["entries"]) {
    if (!e.is_object() || !e.contains("env") || !e["env"].is_string() || !e.contains("bucket") ||
        !e["bucket"].is_string() || !e.contains("winner") || !e["winner"].is_string())
      return absl::InvalidArgumentError("attention cache: an entry lacks env, bucket or winner");
    AttentionCacheEntry c;
    c.env = e["env"].get<std::string>();
    c.bucket = e["bucket"].get<std::string>();
    auto w = ParseAttentionImpl(e["winner"].get<std::string>());
    if (!w.ok() || *w == AttentionImpl::kAuto)
      return absl::InvalidArgumentError(
          absl::StrCat("attention cache: winner must be flash or cudnn in ", c.bucket));
    c.winner = *w;
    if (e.contains("flash_ms") && e["flash_ms"].is_number()) c.flash_ms = e["flash_ms"].get<double>();
    if (e.contains("cudnn_ms") && e["cudnn_ms"].is_number()) c.cudnn_ms = e["cudnn_ms"].get<double>();
    out.push_back(std::move(c));
  }
  return out;
}

AttentionDispatcher::AttentionDispatcher(Options options, Logger log)
    : options_(std::move(options)), log_(std::move(log)) {
  if (!log_)
    log_ = [](const std::string& m) { std::fprintf(stderr, "flashtick attention: %s\n", m.c_str()); };
  if (options_.cache_path.empty()) return;
  std::ifstream in(options_.cache_path);
  if (!in) return;  // no file yet: nothing measured here
  std::stringstream ss;
  ss << in.rdbuf();
  auto entries = AttentionCacheFromJson(ss.str());
  if (!entries.ok()) {
    log_(absl::StrCat("ignoring the attention cache ", options_.cache_path, " (",
                      entries.status().message(), "); it is rewritten after the next measurement"));
    return;
  }
  const std::string env = options_.env.Key();
  for (auto& e : *entries) {
    if (e.env == env)
      mine_[e.bucket] = std::move(e);
    else
      others_.push_back(std::move(e));
  }
}

AttentionImpl AttentionDispatcher::mode() const {
  std::lock_guard<std::mutex> l(mu_);
  return options_.mode;
}

void AttentionDispatcher::set_mode(AttentionImpl mode) {
  std::lock_guard<std::mutex> l(mu_);
  options_.mode = mode;
}

std::optional<AttentionCacheEntry> AttentionDispatcher::Lookup(const AttentionBucket& bucket) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = mine_.find(bucket.Key());
  if (it == mine_.end()) return std::nullopt;
  return it->second;
}

void AttentionDispatcher::LogOnce(const std::string& key, const std::string& message) {
  if (logged_.insert(key).second) log_(message);
}

AttentionChoice AttentionDispatcher::Choose(const AttentionBucket& bucket, bool cudnn_supported,
                                            const Timer& timer) {
  return Choose(bucket, [cudnn_supported] { return cudnn_supported; }, timer);
}

AttentionChoice AttentionDispatcher::Choose(const AttentionBucket& bucket,
                                            const std::function<bool()>& cudnn_supported_fn,
                                            const Timer& timer) {
  std::lock_guard<std::mutex> l(mu_);
  const std::string key = bucket.Key();
  switch (options_.mode) {
    case AttentionImpl::kFlash:
    case AttentionImpl::kFlashSm90a:  // ours (which forward kernel: the CUDA launcher's choice)
      return {AttentionImpl::kFlash, "forced"};
    case AttentionImpl::kCudnn:
      if (cudnn_supported_fn()) return {AttentionImpl::kCudnn, "forced"};
      LogOnce(absl::StrCat("unsupported|", key),
              absl::StrCat("cudnn was asked for but cannot run ", key, "; running ours (flash)"));
      return {AttentionImpl::kFlash, "cudnn_unavailable"};
    case AttentionImpl::kAuto:
      break;
  }
  const auto cached = mine_.find(key);
  if (cached != mine_.end() && cached->second.winner == AttentionImpl::kFlash)
    return {AttentionImpl::kFlash, "cached"};
  if (unmeasurable_.count(key)) return {AttentionImpl::kFlash, "cudnn_failed"};
  if (!cudnn_supported_fn()) {
    LogOnce(absl::StrCat("unsupported|", key),
            absl::StrCat("auto: cudnn cannot run ", key, "; running ours (flash)"));
    return {AttentionImpl::kFlash, "cudnn_unavailable"};
  }
  if (cached != mine_.end()) return {cached->second.winner, "cached"};
  if (!timer) return {AttentionImpl::kFlash, "no_timer"};

  auto flash_ms = timer(AttentionImpl::kFlash);
  auto cudnn_ms = timer(AttentionImpl::kCudnn);
  if (!cudnn_ms.ok() || !flash_ms.ok()) {
    // A failure of ours is not cuDNN's fault, but either way nothing was compared:
    // run ours and keep it for this process only, so a later run measures again.
    const absl::Status& bad = !cudnn_ms.ok() ? cudnn_ms.status() : flash_ms.status();
    unmeasurable_[key] = AttentionImpl::kFlash;
    LogOnce(absl::StrCat("failed|", key),
            absl::StrCat("auto: timing ", key, " failed (", bad.ToString(), "); running ours (flash)"));
    return {AttentionImpl::kFlash, "cudnn_failed"};
  }
  AttentionCacheEntry e;
  e.env = options_.env.Key();
  e.bucket = key;
  e.flash_ms = *flash_ms;
  e.cudnn_ms = *cudnn_ms;
  // Ties go to ours: no dependency on a library where it buys nothing.
  e.winner = *cudnn_ms < *flash_ms ? AttentionImpl::kCudnn : AttentionImpl::kFlash;
  mine_[key] = e;
  log_(absl::StrFormat("auto: %s: flash %.4f ms, cudnn %.4f ms -> %s", key, e.flash_ms, e.cudnn_ms,
                       AttentionImplName(e.winner)));
  if (!options_.cache_path.empty()) {
    if (absl::Status s = SaveLocked(); !s.ok())
      LogOnce("save", absl::StrCat("could not write the attention cache: ", s.message()));
  }
  return {e.winner, "measured"};
}

absl::Status AttentionDispatcher::Save() const {
  std::lock_guard<std::mutex> l(mu_);
  return SaveLocked();
}

absl::Status AttentionDispatcher::SaveLocked() const {
  if (options_.cache_path.empty()) return absl::OkStatus();
  // Another process (a sweep arm on the same GPU) may have added entries since we
  // loaded: merge theirs first, ours win on the same bucket.
  std::vector<AttentionCacheEntry> all;
  std::set<std::string> seen;
  for (const auto& [k, e] : mine_) {
    all.push_back(e);
    seen.insert(e.env + "#" + e.bucket);
  }
  auto keep = [&](const AttentionCacheEntry& e) {
    if (seen.insert(e.env + "#" + e.bucket).second) all.push_back(e);
  };
  for (const auto& e : others_) keep(e);
  if (std::ifstream in(options_.cache_path); in) {
    std::stringstream ss;
    ss << in.rdbuf();
    if (auto disk = AttentionCacheFromJson(ss.str()); disk.ok())
      for (const auto& e : *disk) keep(e);
  }
  const std::string tmp = absl::StrCat(options_.cache_path, ".tmp.", ::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
    out << AttentionCacheToJson(all);
    if (!out.flush()) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), options_.cache_path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot rename ", tmp, " to ", options_.cache_path));
  }
  return absl::OkStatus();
}

}  // namespace flashtick
