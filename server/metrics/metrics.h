// Metrics: the ONE Prometheus registry of flashtickd (Triton style). Every metric
// family the server exports is declared here, with one doc line each; handlers
// record through the methods below and never build families themselves. The
// registry is served by a prometheus::Exposer at /metrics on its own port
// (server/flashtick_server.cc). Names follow Prometheus conventions: base units,
// `_total` for counters, `_seconds` for durations, histograms (not summaries)
// so they aggregate across replicas.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace flashtick {

class Metrics {
 public:
  Metrics();

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // One finished RPC: counts it under its status code and observes its latency.
  // `model` is the resolved model name, or "" when the request named no known
  // model (so unknown names cannot grow the label set without bound).
  void RecordRequest(const std::string& model, const std::string& method,
                     const std::string& code, double seconds);
  // One inference batch that ran: `steps` per row, `rows` rows.
  void RecordInference(const std::string& model, int64_t rows, int64_t steps);
  // One forward pass that served `requests` ModelInfer requests at once (batching).
  void RecordBatch(const std::string& model, int64_t requests);
  // Where one request's time went: waiting on the inference queue (arrival on the
  // queue to the start of its forward) and the forward itself.
  void RecordQueueAndCompute(const std::string& model, const std::string& method,
                             double queue_seconds, double compute_seconds);
  // The peak memory one request's forward (or stream tick) used on the backend: its
  // part of the model's reused activation workspace plus what it allocated itself
  // (server/inference/forward_window.h, kernels/memory_scope.h). Not the weights or
  // other memory held before the forward, and never another request's: exact with any
  // --workers and open streams. Requests batched into one forward each report it.
  void RecordRequestPeakMemory(const std::string& model, const std::string& method,
                               int64_t peak_bytes);
  // Marks a loaded model version, with the kernel path and device it runs on.
  void SetModelInfo(const std::string& model, const std::string& version,
                    const std::string& kernel_path, const std::string& device);
  // Drops that series again: the version was unloaded or replaced.
  void RemoveModelInfo(const std::string& model, const std::string& version,
                       const std::string& kernel_path, const std::string& device);
  // One RepositoryModelLoad, by outcome (`result`: the gRPC status code name);
  // `model` is "" when the name was not a model directory (bounded label set).
  void RecordModelLoad(const std::string& model, const std::string& result);
  // Requests waiting for or running on an inference worker.
  void SetInferenceQueueLength(int64_t length);
  // One tick-stream step answered: from the tick's arrival to its prediction.
  void RecordStreamTick(const std::string& model, double seconds);
  // A tick stream opened (+1) or closed (-1).
  void AddActiveStreams(int delta);
  // A tick stream refused by a limit (server/stream/stream_admission.h): reason
  // "server_limit", "client_limit" or "memory".
  void RecordStreamRefused(const std::string& reason);
  // A gRPC connection closed at accept (server/connection_gate.h): reason
  // max_connections or descriptors.
  void RecordConnectionRefused(const std::string& reason);
  // Tick streams ended for sending nothing within the idle timeout.
  void RecordStreamIdleClosed(int count);
  // Memory the open sessions reserved, and the limit for all of them together.
  void SetStreamMemory(int64_t reserved_bytes, int64_t limit_bytes);
  // Experiments refused by the per-client limit on queued and running ones.
  void RecordExperimentRefused();
  // One optimizer step of an experiment arm: its loss, wall-clock and the
  // backend's peak memory (device memory on CUDA, tracked host memory on the CPU).
  // hessian_refreshed: the step refreshed Sophia-H's Hessian estimate (kind="refresh"
  // on the step-time histogram; every other step is kind="plain").
  void RecordTrainStep(const std::string& experiment, const std::string& arm, double loss,
                       double seconds, int64_t peak_bytes, bool hessian_refreshed = false);
  // An experiment arm started (true) or stopped training (false).
  void SetArmRunning(const std::string& experiment, const std::string& arm, bool running);
  // The number of experiments in one state ("queued", "running", ...).
  void SetExperiments(const std::string& state, int64_t count);
  // Where an arm trains: its GPU index (the first, for a data-parallel arm), −1 on
  // the CPU; and how many of the scheduler's GPUs hold an arm (docs/multi_gpu.md).
  void SetArmGpu(const std::string& experiment, const std::string& arm, int gpu);
  // Drops every {experiment, arm} series of the arm, so that /metrics does not
  // grow by a score of series per arm for as long as the process lives: called when
  // the experiment ends (its results stay in the store and the report).
  void RetireArm(const std::string& experiment, const std::string& arm);
  void SetSweepGpus(int busy, int total);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  // flashtick_requests_total{model,method,code}: RPCs finished, by gRPC status code.
  prometheus::Family<prometheus::Counter>* requests_total_;
  // flashtick_request_duration_seconds{model,method}: RPC latency from arrival to Finish.
  prometheus::Family<prometheus::Histogram>* request_duration_seconds_;
  // flashtick_request_sequence_length{model}: steps N per row of each inference request.
  prometheus::Family<prometheus::Histogram>* request_sequence_length_;
  // flashtick_ticks_total{model}: steps predicted (rows × N); rate() is ticks per second.
  prometheus::Family<prometheus::Counter>* ticks_total_;
  // flashtick_batch_size{model}: ModelInfer requests merged into one forward pass.
  prometheus::Family<prometheus::Histogram>* batch_size_;
  // flashtick_queue_duration_seconds{model,method}: time on the inference queue.
  prometheus::Family<prometheus::Histogram>* queue_duration_seconds_;
  // flashtick_compute_duration_seconds{model,method}: model time of the request's forward.
  prometheus::Family<prometheus::Histogram>* compute_duration_seconds_;
  // flashtick_request_gpu_peak_bytes{model,method}: peak memory a request's forward used.
  prometheus::Family<prometheus::Histogram>* request_gpu_peak_bytes_;
  // flashtick_model_info{model,version,kernel_path,device}: 1 per loaded model version.
  prometheus::Family<prometheus::Gauge>* model_info_;
  // flashtick_model_loads_total{model,result}: RepositoryModelLoad calls by outcome.
  prometheus::Family<prometheus::Counter>* model_loads_total_;
  // flashtick_inference_queue_length: inference requests queued or running.
  prometheus::Family<prometheus::Gauge>* inference_queue_length_;
  // flashtick_stream_tick_duration_seconds{model}: per-tick latency on TickStream.
  prometheus::Family<prometheus::Histogram>* stream_tick_duration_seconds_;
  // flashtick_active_streams: open TickStream sessions.
  prometheus::Family<prometheus::Gauge>* active_streams_;
  // flashtick_stream_refusals_total{reason}: streams refused by a limit.
  prometheus::Family<prometheus::Counter>* stream_refusals_;
  // flashtick_connection_refusals_total{reason}: connections closed at accept.
  prometheus::Family<prometheus::Counter>* connection_refusals_;
  // flashtick_stream_idle_closed_total: streams ended by the idle timeout.
  prometheus::Family<prometheus::Counter>* stream_idle_closed_;
  // flashtick_stream_memory_reserved_bytes / _limit_bytes: sessions' reservations.
  prometheus::Family<prometheus::Gauge>* stream_memory_reserved_;
  prometheus::Family<prometheus::Gauge>* stream_memory_limit_;
  // flashtick_experiment_refusals_total: SubmitSweep refused by the per-client limit.
  prometheus::Family<prometheus::Counter>* experiment_refusals_;
  // flashtick_train_loss{experiment,arm}: training loss of the arm's latest step.
  prometheus::Family<prometheus::Gauge>* train_loss_;
  // flashtick_train_step_seconds{experiment,arm,kind}: wall-clock per optimizer step;
  // kind "refresh" for Sophia-H's Hessian-refresh (HVP) steps, "plain" for the others.
  prometheus::Family<prometheus::Histogram>* train_step_seconds_;
  // flashtick_train_steps_total{experiment,arm}: optimizer steps taken (resumes included).
  prometheus::Family<prometheus::Counter>* train_steps_total_;
  // flashtick_train_arm_running{experiment,arm}: 1 while the arm trains, else 0.
  prometheus::Family<prometheus::Gauge>* train_arm_running_;
  // flashtick_train_gpu_peak_bytes{experiment,arm}: peak backend memory of the arm's steps.
  prometheus::Family<prometheus::Gauge>* train_gpu_peak_bytes_;
  // flashtick_experiments{state}: experiments in the store by state.
  prometheus::Family<prometheus::Gauge>* experiments_;
  // flashtick_sweep_arm_gpu{experiment,arm}: GPU index the arm was placed on, −1 = CPU.
  prometheus::Family<prometheus::Gauge>* sweep_arm_gpu_;
  // flashtick_sweep_gpus_busy: GPUs holding a sweep arm now.
  prometheus::Family<prometheus::Gauge>* sweep_gpus_busy_;
  // flashtick_sweep_gpus: GPUs the sweep scheduler places arms on (0 on the CPU).
  prometheus::Family<prometheus::Gauge>* sweep_gpus_;
};

}  // namespace flashtick
