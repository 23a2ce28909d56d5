// serve_latency_inproc: the in-process side of bench/serve_latency. What
// flashtickd does per request, without gRPC: Transformer::Predict of a [B, N, F]
// day (host ticks in, host probabilities out, synchronised) at B = 1 and batched,
// and Transformer::Step per tick of one stream (the incremental K/V path of
// TickStream). p50/p99/p99.9 over --reps repetitions (ticks: over every step of a
// --ticks-step day). Before timing, Step is checked against the full forward on the
// same device (--check-steps rows; bound 1e-4 in fp32, 2e-2 in bf16, as
// tests/model/decode_state_test.cc). One JSON line per measurement on stdout.
// Used on the CPU by serve_latency.py and on the H200 by
// bench/scripts/gpu_serve_latency.sh (the GPU machine has no C++ gRPC).
//
//   serve_latency_inproc --model-dir DIR [--device cpu|cuda] [--n 512,23400]
//       [--batch 1,8] [--reps 20] [--warmup 2] [--ticks 2048] [--check-steps 256]
//       [--threads 0] [--dump PREFIX] [--last-only 0|1] [--stop-check 0|1]
//       [--profile-ops REPS] [--pinned-input 0|1]
// --last-only 1 also times the last-step forward (what a server request for the next
// call runs: the last layer on one row per sequence); --stop-check 1 also times the
// forward with a stop callback, as flashtickd passes one (the model synchronises
// before each layer after the first to ask it, model/transformer.h).
// --pinned-input 1 also times every mode with the ticks already in page-locked host
// memory (Backend::AllocateHostStaging, what flashtickd stacks a merged batch into:
// kernels/host_staging_pool.h), rows "<mode>_pinned_input", so the upload from pageable
// memory and the single DMA are side by side in one run.
// --profile-ops REPS (0: off) then runs each timed forward REPS more times with a mark
// before every op and copy (profiling_backend.h) and prints where one forward's stream
// time goes, per op kind: one "<what>_profile" JSON line each, and the table on stderr.
// The timed runs above it run without marks.
// --dump writes PREFIX.x.f32 (ticks [1, check-steps, F]) and PREFIX.probs.f32 (their
// full-forward probabilities), raw little-endian fp32, for the PyTorch twin's check.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/random_ticks.h"
#include "common/status_macros.h"
#include "bench/serve_latency/profiling_backend.h"
#include "kernels/backend.h"
#include "model/decode_state.h"
#include "model/transformer.h"
#include "nlohmann/json.hpp"

namespace flashtick::bench {
namespace {

struct Args {
  std::string model_dir;
  std::string device = "cpu";
  std::vector<int64_t> n = {512};
  std::vector<int64_t> batch = {1, 8};
  int reps = 20;
  int warmup = 2;
  int64_t ticks = 2048;
  int64_t check_steps = 256;
  int threads = 0;
  int last_only = 0;   // 1: also the last-step forward
  int stop_check = 0;  // 1: also with a stop callback between layers
  int profile_ops = 0;  // forwards profiled per op after each timed shape (0: none)
  int pinned_input = 0;  // also time each mode from page-locked ticks
  std::string dump;  // PREFIX: the check input and its forward, for torch_serve.py --compare
};

absl::StatusOr<std::vector<int64_t>> ParseList(const std::string& flag, const std::string& v) {
  std::vector<int64_t> out;
  for (absl::string_view part : absl::StrSplit(v, ',')) {
    int64_t x = 0;
    if (!absl::SimpleAtoi(part, &x) || x < 1) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " wants positive integers, got '", v, "'"));
    }
    out.push_back(x);
  }
  return out;
}

absl::StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
    const std::string v = argv[++i];
    int64_t x = 0;
    if (flag == "--model-dir") {
      a.model_dir = v;
    } else if (flag == "--dump") {
      a.dump = v;
    } else if (flag == "--device") {
      a.device = v;
    } else if (flag == "--n") {
      ASSIGN_OR_RETURN(a.n, ParseList(flag, v));
    } else if (flag == "--batch") {
      ASSIGN_OR_RETURN(a.batch, ParseList(flag, v));
    } else if (absl::SimpleAtoi(v, &x) && x >= 0) {
      if (flag == "--reps") a.reps = static_cast<int>(std::max<int64_t>(1, x));
      else if (flag == "--warmup") a.warmup = static_cast<int>(x);
      else if (flag == "--ticks") a.ticks = x;
      else if (flag == "--check-steps") a.check_steps = x;
      else if (flag == "--threads") a.threads = static_cast<int>(x);
      else if (flag == "--last-only") a.last_only = static_cast<int>(x);
      else if (flag == "--stop-check") a.stop_check = static_cast<int>(x);
      else if (flag == "--profile-ops") a.profile_ops = static_cast<int>(x);
      else if (flag == "--pinned-input") a.pinned_input = static_cast<int>(x);
      else return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag or bad value: ", flag, " ", v));
    }
  }
  if (a.model_dir.empty()) {
    return absl::InvalidArgumentError("--model-dir DIR (config.json + model.safetensors) is required");
  }
  return a;
}

// Nearest-rank percentile of sorted samples (q in [0, 1]).
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return NAN;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

nlohmann::json Stats(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double m : ms) sum += m;
  return {{"samples", ms.size()},
          {"p50_ms", Percentile(ms, 0.5)},
          {"p99_ms", Percentile(ms, 0.99)},
          {"p999_ms", Percentile(ms, 0.999)},
          {"mean_ms", sum / static_cast<double>(ms.size())}};
}

void Emit(const nlohmann::json& rec) {
  std::printf("%s\n", rec.dump().c_str());
  std::fflush(stdout);
}

// Step through `steps` rows and compare each answer with the full forward's row
// (and write the input and the forward for the PyTorch twin when `dump` is set).
absl::Status CheckStep(Transformer* model, const nlohmann::json& base, int64_t steps,
                       const std::string& dump) {
  const int64_t F = model->config().features, K = model->config().classes;
  const std::vector<float> x = RandomTicks(steps * F, 7);
  ASSIGN_OR_RETURN(std::vector<float> full, model->Predict(x, 1, steps, false));
  if (!dump.empty()) {
    using Blob = std::pair<const char*, const std::vector<float>*>;
    for (const auto& [suffix, data] : {Blob{".x.f32", &x}, Blob{".probs.f32", &full}}) {
      std::ofstream out(dump + suffix, std::ios::binary);
      out.write(reinterpret_cast<const char*>(data->data()),
                static_cast<std::streamsize>(data->size() * sizeof(float)));
      if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", dump, suffix));
    }
  }
  if (!model->SupportsDecode()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::unique_ptr<DecodeState> state, DecodeState::Create(*model));
  double worst = 0;
  for (int64_t t = 0; t < steps; ++t) {
    ASSIGN_OR_RETURN(std::vector<float> p,
                     model->Step(state.get(), absl::MakeConstSpan(x).subspan(t * F, F)));
    for (int64_t k = 0; k < K; ++k) worst = std::max(worst, double(std::abs(p[k] - full[t * K + k])));
  }
  const double tol = model->compute_dtype() == DType::kF32 || model->compute_dtype() == DType::kF64
                         ? 1e-4
                         : 2e-2;
  nlohmann::json rec = base;
  rec.update({{"what", "step_vs_forward"}, {"N", steps}, {"max_abs_diff", worst}, {"tol", tol},
              {"ok", worst <= tol}});
  Emit(rec);
  if (!(worst <= tol)) {
    return absl::InternalError(absl::StrCat("Step differs from the full forward by ", worst,
                                            " > ", tol, " on ", base["device"].get<std::string>()));
  }
  return absl::OkStatus();
}

// `reps` forwards of `x` with the profiler on, summed (StepProfile::Table divides by
// the count). The first mark opens before Predict, so the host's work ahead of the first
// op (the ticks' encoding) is charged to "host".
absl::StatusOr<StepProfile> ProfileForwards(Transformer* model, ProfilingBackend* be,
                                            absl::Span<const float> x, int64_t b, int64_t n,
                                            bool last_only, const std::function<bool()>& stop,
                                            int reps) {
  StepProfile total;
  for (int r = 0; r < reps; ++r) {
    be->profiler().Begin();
    RETURN_IF_ERROR(be->profiler().Mark("forward", "host"));
    ASSIGN_OR_RETURN(std::vector<float> probs, model->Predict(x, b, n, last_only, stop));
    ASSIGN_OR_RETURN(StepProfile one, be->profiler().End());
    total.Add(one);
  }
  return total;
}

nlohmann::json ProfileJson(const StepProfile& p) {
  const double n = p.steps > 0 ? static_cast<double>(p.steps) : 1.0;
  nlohmann::json rows = nlohmann::json::array();
  for (const ProfileRow& r : p.rows) {
    rows.push_back({{"kind", r.kind}, {"ms", r.ms / n}, {"count", static_cast<double>(r.count) / n},
                    {"share", r.share}});
  }
  return {{"forwards", p.steps}, {"total_ms", p.total_ms / n}, {"ops", rows}};
}

absl::Status Main(int argc, char** argv) {
  ASSIGN_OR_RETURN(Args a, Parse(argc, argv));
  BackendOptions options;
  options.threads = a.threads;
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(a.device, options));
  // With --profile-ops the model runs on the profiling wrapper, idle (one branch a call)
  // except in the profiled forwards.
  ProfilingBackend* profiling = nullptr;
  if (a.profile_ops > 0) {
    auto wrapped = std::make_unique<ProfilingBackend>(std::move(backend));
    profiling = wrapped.get();
    backend = std::move(wrapped);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Transformer> model, Transformer::Load(a.model_dir, backend.get()));
  const int64_t F = model->config().features;
  const nlohmann::json base = {{"impl", "flashtick_inproc"},
                               {"device", backend->name()},
                               {"kernel_path", model->kernel_path()},
                               {"dtype", DTypeName(model->compute_dtype())},
                               {"params", model->parameter_count()}};
  // A failed check is reported at the end: the timings are still worth having.
  const absl::Status check =
      a.check_steps > 0 ? CheckStep(model.get(), base, a.check_steps, a.dump) : absl::OkStatus();
  if (!check.ok() && check.code() != absl::StatusCode::kInternal) return check;

  struct Mode {
    const char* what;
    bool last_only, stop_check;
  };
  std::vector<Mode> modes = {{"forward", false, false}};
  if (a.stop_check) modes.push_back({"forward_stop_check", false, true});
  if (a.last_only) modes.push_back({"forward_last", true, false});
  if (a.last_only && a.stop_check) modes.push_back({"forward_last_stop_check", true, true});
  const std::function<bool()> never = [] { return false; };
  for (int64_t n : a.n) {
    for (int64_t b : a.batch) {
      const std::vector<float> x = RandomTicks(b * n * F, static_cast<uint32_t>(n + b));
      std::shared_ptr<void> pinned;  // the same ticks in page-locked memory
      if (a.pinned_input) {
        ASSIGN_OR_RETURN(pinned, backend->AllocateHostStaging(x.size() * sizeof(float)));
        std::memcpy(pinned.get(), x.data(), x.size() * sizeof(float));
      }
      const std::vector<bool> sources =
          a.pinned_input ? std::vector<bool>{false, true} : std::vector<bool>{false};
      for (const Mode& mode : modes) {
        for (const bool from_pinned : sources) {
          const absl::Span<const float> input =
              from_pinned ? absl::MakeConstSpan(static_cast<const float*>(pinned.get()), x.size())
                          : absl::MakeConstSpan(x);
          const std::string what = absl::StrCat(mode.what, from_pinned ? "_pinned_input" : "");
          std::vector<double> ms;
          for (int r = 0; r < a.warmup + a.reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            ASSIGN_OR_RETURN(std::vector<float> probs,
                             model->Predict(input, b, n, mode.last_only,
                                            mode.stop_check ? never : std::function<bool()>()));
            if (r >= a.warmup) ms.push_back(Ms(std::chrono::steady_clock::now() - t0));
          }
          nlohmann::json rec = base;
          rec.update({{"what", what}, {"N", n}, {"B", b}});
          rec.update(Stats(ms));
          rec["rows_per_s"] = 1000.0 * static_cast<double>(b) / rec["mean_ms"].get<double>();
          Emit(rec);
          if (profiling != nullptr) {
            ASSIGN_OR_RETURN(
                StepProfile p,
                ProfileForwards(model.get(), profiling, input, b, n, mode.last_only,
                                mode.stop_check ? never : std::function<bool()>(), a.profile_ops));
            nlohmann::json prof = base;
            prof.update({{"what", absl::StrCat(what, "_profile")}, {"N", n}, {"B", b}});
            prof.update(ProfileJson(p));
            Emit(prof);
            std::fprintf(stderr, "%s N=%lld B=%lld, ms per forward:\n%s", what.c_str(),
                         static_cast<long long>(n), static_cast<long long>(b), p.Table().c_str());
          }
        }
      }
    }
  }

  if (a.ticks > 0 && model->SupportsDecode()) {
    const std::vector<float> x = RandomTicks(a.ticks * F, 11);
    std::vector<double> ms;
    // With warm-up, a short first day (≤ 256 steps) is run and dropped.
    const std::vector<int64_t> days =
        a.warmup > 0 ? std::vector<int64_t>{std::min<int64_t>(256, a.ticks), a.ticks}
                     : std::vector<int64_t>{a.ticks};
    for (int64_t day_steps : days) {
      ms.clear();
      ASSIGN_OR_RETURN(std::unique_ptr<DecodeState> state, DecodeState::Create(*model));
      for (int64_t t = 0; t < day_steps; ++t) {
        const auto t0 = std::chrono::steady_clock::now();
        ASSIGN_OR_RETURN(std::vector<float> p,
                         model->Step(state.get(), absl::MakeConstSpan(x).subspan(t * F, F)));
        ms.push_back(Ms(std::chrono::steady_clock::now() - t0));
      }
    }
    nlohmann::json rec = base;
    rec.update({{"what", "tick"}, {"N", a.ticks}, {"B", 1}});
    rec.update(Stats(ms));
    Emit(rec);
  }
  return check;
}

}  // namespace
}  // namespace flashtick::bench

int main(int argc, char** argv) {
  const absl::Status s = flashtick::bench::Main(argc, argv);
  if (!s.ok()) {
    std::fprintf(stderr, "serve_latency_inproc: %s\n", s.ToString().c_str());
    std::printf("{\"impl\":\"flashtick_inproc\",\"error\":%s}\n",
                nlohmann::json(std::string(s.message())).dump().c_str());
    return 1;
  }
  return 0;
}
