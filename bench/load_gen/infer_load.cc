// RunInferLoad (see infer_load.h). One thread does everything: it starts every
// request whose intended time has come, then sleeps in CompletionQueue::AsyncNext
// until the next intended time or the next answer, whichever is first. A send never
// waits for an answer (only for --max-inflight, counted), and the latency of an
// answer is taken from the request's intended time, not from when it was really
// sent: if this thread is late, its lateness is in the latency (and in the send lag,
// reported apart), never silently dropped. This is wrk2's scheme (G. Tene,
// https://github.com/giltene/wrk2; "How NOT to Measure Latency", Strange Loop 2015).
#include "bench/load_gen/infer_load.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bench/load_gen/load_report.h"
#include "bench/load_gen/poisson_arrivals.h"

namespace flashtick::bench {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NsSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

// One request in flight; its address is the completion-queue tag.
struct Call {
  grpc::ClientContext context;
  inference::ModelInferResponse response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<inference::ModelInferResponse>> reader;
  int64_t intended_ns = 0;
  bool measured = false;
};

// Sleeping longer than this while only answers are awaited costs nothing: an answer
// wakes the queue at once.
constexpr int64_t kIdleWaitNs = 50'000'000;
// gRPC's poller sleeps in whole milliseconds (epoll_wait), so a timed AsyncNext wakes
// up to ~2 ms after its deadline: measured 1.1–1.4 ms median send lag on this
// project's CPU machine when it timed the sends. So the queue is only asked to wake
// this long before a send is due; the rest is waited out with non-blocking polls and
// short sleeps (or a spin, InferLoadSpec::spin).
constexpr int64_t kCoarseSlackNs = 2'500'000;
constexpr int64_t kFineSleepNs = 20'000;

}  // namespace

absl::StatusOr<RateResult> RunInferLoad(inference::GRPCInferenceService::Stub* stub,
                                        const inference::ModelInferRequest& request,
                                        const InferLoadSpec& spec) {
  if (!(spec.rate_per_s > 0) || !(spec.duration_s > 0) || spec.warmup_s < 0 ||
      spec.max_inflight < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("RunInferLoad: rate ", spec.rate_per_s, "/s, duration ", spec.duration_s,
                     " s, warmup ", spec.warmup_s, " s, max in flight ", spec.max_inflight));
  }
  RateResult r;
  r.offered_rps = spec.rate_per_s;
  r.window_s = spec.duration_s;
  const int64_t window_start = static_cast<int64_t>(spec.warmup_s * 1e9);
  const int64_t window_end = window_start + static_cast<int64_t>(spec.duration_s * 1e9);
  const auto timeout = std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::duration<double>(spec.timeout_s));

  grpc::CompletionQueue cq;
  PoissonArrivals arrivals(spec.rate_per_s, spec.seed);
  int64_t next = arrivals.Next();
  int64_t inflight = 0;
  bool held_by_cap = false;
  const double cpu0 = ProcessCpuSeconds();
  const Clock::time_point t0 = Clock::now();

  while (true) {
    // Every send that is due, now.
    while (next < window_end && next <= NsSince(t0)) {
      if (inflight >= spec.max_inflight) {
        if (!held_by_cap) ++r.inflight_cap_waits;
        held_by_cap = true;
        break;
      }
      held_by_cap = false;
      // The lag is taken before the call is started: it says how late this thread came
      // to the send. What starting the call costs (serializing, and gRPC often writes
      // to the socket inline) is client time inside the request's latency.
      const int64_t lag = NsSince(t0) - next;
      auto* call = new Call;
      call->intended_ns = next;
      call->measured = next >= window_start;
      call->context.set_deadline(std::chrono::system_clock::now() + timeout);
      call->reader = stub->PrepareAsyncModelInfer(&call->context, request, &cq);
      call->reader->StartCall();
      call->reader->Finish(&call->response, &call->status, call);
      if (call->measured) {
        ++r.scheduled;
        r.send_lag_ns.Record(lag);
      }
      r.max_inflight = std::max(r.max_inflight, ++inflight);
      next = arrivals.Next();
    }
    const bool sending = next < window_end;
    if (!sending && inflight == 0) break;

    // Wait for the next send or an answer, whichever is first.
    const bool can_send = sending && inflight < spec.max_inflight;
    const int64_t until_send = can_send ? next - NsSince(t0) : kIdleWaitNs;
    const bool fine = until_send <= kCoarseSlackNs;
    const gpr_timespec deadline =
        fine ? gpr_inf_past(GPR_CLOCK_MONOTONIC)
             : gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                            gpr_time_from_nanos(until_send - (can_send ? kCoarseSlackNs : 0),
                                                GPR_TIMESPAN));
    void* tag = nullptr;
    bool ok = false;
    const auto event = cq.AsyncNext(&tag, &ok, deadline);
    if (event == grpc::CompletionQueue::TIMEOUT) {
      if (fine && !spec.spin && until_send > 0) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(until_send, kFineSleepNs)));
      }
      continue;
    }
    if (event == grpc::CompletionQueue::SHUTDOWN) {
      return absl::InternalError("RunInferLoad: the completion queue shut down under load");
    }
    std::unique_ptr<Call> call(static_cast<Call*>(tag));
    const int64_t done = NsSince(t0);
    --inflight;
    if (!call->measured) continue;
    r.last_done_s = std::max(r.last_done_s, static_cast<double>(done - window_start) * 1e-9);
    if (!call->status.ok()) {
      ++r.errors[absl::StatusCodeToString(static_cast<absl::StatusCode>(call->status.error_code()))];
    } else if (spec.expected_output_bytes > 0 &&
               (call->response.raw_output_contents_size() != 1 ||
                static_cast<int64_t>(call->response.raw_output_contents(0).size()) !=
                    spec.expected_output_bytes)) {
      ++r.errors["BAD_RESPONSE"];
    } else {
      ++r.ok;
      r.latency_ns.Record(done - call->intended_ns);
    }
  }
  r.wall_s = static_cast<double>(NsSince(t0)) * 1e-9;
  r.cpu_s = ProcessCpuSeconds() - cpu0;
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }  // nothing is left in flight; Next returns false once shut down and empty
  return r;
}

}  // namespace flashtick::bench
