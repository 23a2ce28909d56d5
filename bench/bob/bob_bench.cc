// bob benchmark: attention backward-over-backward (FlashBoB) on the CUDA backend,
// per N (default 2,048 … 262,144 with the day-long 23,400), B=1, H=12, d=64, bf16,
// causal, all three cotangents non-zero. Prints one JSON line per N (docs/benchmarks.md schema):
// ms (median over reps, L2 flushed before each), tflops (17 matmul units of 2·B·H·N²·d,
// halved causal: docs/derivations/attention_bwd_bwd.md §4; tflops_executed counts the
// 19 units our pass 1 + pass 2 run), peak_extra_bytes (the backend allocator's peak
// during the op minus its use before: the c, e row states), oom. Before timing it checks
// the kernel against the float64 CPU reference on a small shape (--check, on by default).
// --dump-dir writes inputs and outputs (N ≤ --dump-max-n) for bench/bob/torch_bob.py's
// precision table against float64.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bob/bob_bench_run.h"
#include "common/status_macros.h"
#include "kernels/backend.h"
#include "nlohmann/json.hpp"

namespace flashtick::bench {
namespace {

struct Args {
  std::vector<int64_t> ns = {2048, 4096, 8192, 16384, 23400, 32768, 65536, 131072, 262144};
  int64_t B = 1, H = 12, Hkv = 12, D = 64;
  bool causal = true, check = true;
  std::string json_path, dump_dir, commit = "unknown";
  int64_t dump_max_n = 32768;
};

absl::StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> absl::StatusOr<std::string> {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
      return std::string(argv[++i]);
    };
    auto integer = [&](int64_t* out) -> absl::Status {
      ASSIGN_OR_RETURN(std::string v, value());
      if (!absl::SimpleAtoi(v, out))
        return absl::InvalidArgumentError(absl::StrCat(flag, ": not an integer: ", v));
      return absl::OkStatus();
    };
    if (flag == "--n") {
      ASSIGN_OR_RETURN(std::string v, value());
      a.ns.clear();
      for (absl::string_view part : absl::StrSplit(v, ',')) {
        int64_t n = 0;
        if (!absl::SimpleAtoi(part, &n) || n < 1)
          return absl::InvalidArgumentError(absl::StrCat("--n: bad length ", std::string(part)));
        a.ns.push_back(n);
      }
    } else if (flag == "--b") {
      RETURN_IF_ERROR(integer(&a.B));
    } else if (flag == "--h") {
      RETURN_IF_ERROR(integer(&a.H));
      a.Hkv = a.H;
    } else if (flag == "--hkv") {
      RETURN_IF_ERROR(integer(&a.Hkv));
    } else if (flag == "--d") {
      RETURN_IF_ERROR(integer(&a.D));
    } else if (flag == "--non-causal") {
      a.causal = false;
    } else if (flag == "--no-check") {
      a.check = false;
    } else if (flag == "--json") {
      ASSIGN_OR_RETURN(a.json_path, value());
    } else if (flag == "--dump-dir") {
      ASSIGN_OR_RETURN(a.dump_dir, value());
    } else if (flag == "--dump-max-n") {
      RETURN_IF_ERROR(integer(&a.dump_max_n));
    } else if (flag == "--commit") {
      ASSIGN_OR_RETURN(a.commit, value());
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag ", flag,
                       "; flags: --n 2048,4096 --b --h --hkv --d --non-causal "
                       "--no-check --json PATH --dump-dir DIR --dump-max-n N --commit SHA"));
    }
  }
  return a;
}

absl::Status Main(int argc, char** argv) {
  ASSIGN_OR_RETURN(Args args, Parse(argc, argv));
  if (!CudaAvailable())
    return absl::FailedPreconditionError("bob_bench needs a CUDA GPU (none is visible)");
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
    return absl::InternalError("cudaGetDeviceProperties failed");
  if (args.check) {
    ASSIGN_OR_RETURN(double err, CheckAgainstCpu());
    std::cerr << "bob check vs float64 CPU reference (B=1,T=300,H=4,Hkv=2,D=64,causal, bf16): "
              << "worst rel_l2=" << err << "\n";
    if (!(err < kCheckMaxRelL2))
      return absl::InternalError(absl::StrCat("bob check failed: rel_l2 ", err, " ≥ ",
                                              kCheckMaxRelL2, "; not timing a wrong kernel"));
  }
  std::ofstream json_file;
  if (!args.json_path.empty()) json_file.open(args.json_path, std::ios::app);
  BenchShape shape{args.B, 0, args.H, args.Hkv, args.D, args.causal};
  for (int64_t n : args.ns) {
    shape.T = n;
    const std::string dump = (!args.dump_dir.empty() && n <= args.dump_max_n) ? args.dump_dir : "";
    absl::StatusOr<BenchResult> r = RunOne(shape, dump);
    nlohmann::json j = {{"bench", "bob"},  {"op", "bwd_bwd"},  {"impl", "flashtick_flash_cuda"},
                        {"B", shape.B},    {"H", shape.H},     {"Hkv", shape.Hkv},
                        {"N", n},          {"d", shape.D},     {"causal", shape.causal},
                        {"dtype", "bf16"}, {"gpu", prop.name}, {"commit", args.commit}};
    if (!r.ok() && absl::IsResourceExhausted(r.status())) {
      j["oom"] = true;
      j["error"] = std::string(r.status().message());
    } else if (!r.ok()) {
      return r.status();
    } else {
      j["oom"] = false;
      j["ms"] = r->ms;
      j["tflops"] = BobFlops(shape, kBobMatmulUnits) / (r->ms * 1e-3) / 1e12;
      j["tflops_executed"] = BobFlops(shape, kBobExecutedUnits) / (r->ms * 1e-3) / 1e12;
      j["peak_extra_bytes"] = r->peak_extra_bytes;
      j["reps"] = r->reps;
      j["finite"] = r->finite;
      if (r->fwd_bwd_ms > 0) {
        j["fwd_bwd_ms"] = r->fwd_bwd_ms;
        j["ratio_vs_fwd_bwd"] = r->ms / r->fwd_bwd_ms;
      }
    }
    const std::string line = j.dump();
    std::cout << line << std::endl;
    if (json_file.is_open()) json_file << line << "\n";
    if (r.ok() && !r->finite)
      return absl::InternalError(absl::StrCat("N=", n, ": NaN/Inf in the outputs"));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace flashtick::bench

int main(int argc, char** argv) {
  const absl::Status s = flashtick::bench::Main(argc, argv);
  if (!s.ok()) {
    std::cerr << "bob_bench: " << s << "\n";
    return 1;
  }
  return 0;
}
