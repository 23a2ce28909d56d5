// Metric families of flashtickd (doc lines in metrics.h). Bucket choices: latency
// spans a sub-millisecond GPU tick to a multi-second full day on 2 CPU cores, so
// exponential buckets ×2.5 from 0.25 ms to ~60 s; sequence length in powers of
// two from 1 to 262,144 steps (the longest N the kernels target).
#include "server/metrics/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

namespace flashtick {
namespace {

prometheus::Histogram::BucketBoundaries Exponential(double start, double factor, int count) {
  prometheus::Histogram::BucketBoundaries bounds;
  double value = start;
  for (int i = 0; i < count; ++i, value *= factor) bounds.push_back(value);
  return bounds;
}

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries(
      Exponential(0.00025, 2.5, 15));  // 0.25 ms ... 37 s, then +Inf
  return *buckets;
}

const prometheus::Histogram::BucketBoundaries& LengthBuckets() {
  static const auto* buckets =
      new prometheus::Histogram::BucketBoundaries(Exponential(1, 2, 19));  // 1 ... 262,144
  return *buckets;
}

const prometheus::Histogram::BucketBoundaries& BatchBuckets() {
  static const auto* buckets =
      new prometheus::Histogram::BucketBoundaries(Exponential(1, 2, 9));  // 1 ... 256
  return *buckets;
}

// Powers of two from 1 MiB (a tiny model's weights) to 256 GiB (past any one GPU).
const prometheus::Histogram::BucketBoundaries& MemoryBuckets() {
  static const auto* buckets =
      new prometheus::Histogram::BucketBoundaries(Exponential(1 << 20, 2, 19));
  return *buckets;
}

}  // namespace

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
  requests_total_ = &prometheus::BuildCounter()
                         .Name("flashtick_requests_total")
                         .Help("RPCs finished, by model, method and gRPC status code.")
                         .Register(*registry_);
  request_duration_seconds_ = &prometheus::BuildHistogram()
                                   .Name("flashtick_request_duration_seconds")
                                   .Help("RPC latency from arrival to Finish, by model and method.")
                                   .Register(*registry_);
  request_sequence_length_ = &prometheus::BuildHistogram()
                                  .Name("flashtick_request_sequence_length")
                                  .Help("Steps N per row of each inference request.")
                                  .Register(*registry_);
  ticks_total_ = &prometheus::BuildCounter()
                      .Name("flashtick_ticks_total")
                      .Help("Steps predicted (rows x N); rate() gives ticks per second.")
                      .Register(*registry_);
  batch_size_ = &prometheus::BuildHistogram()
                    .Name("flashtick_batch_size")
                    .Help("ModelInfer requests merged into one forward pass (1: not batched).")
                    .Register(*registry_);
  queue_duration_seconds_ = &prometheus::BuildHistogram()
                                .Name("flashtick_queue_duration_seconds")
                                .Help("Time a request waited on the inference queue before its forward.")
                                .Register(*registry_);
  compute_duration_seconds_ = &prometheus::BuildHistogram()
                                  .Name("flashtick_compute_duration_seconds")
                                  .Help("Model time of the forward (or decode step) that served a request.")
                                  .Register(*registry_);
  request_gpu_peak_bytes_ =
      &prometheus::BuildHistogram()
           .Name("flashtick_request_gpu_peak_bytes")
           .Help("Peak backend memory a request's forward used, weights not included (host "
                 "memory on the CPU backend), by model and method.")
           .Register(*registry_);
  model_info_ = &prometheus::BuildGauge()
                     .Name("flashtick_model_info")
                     .Help("1 for each loaded model version, labelled with its kernel path and device.")
                     .Register(*registry_);
  model_loads_total_ = &prometheus::BuildCounter()
                           .Name("flashtick_model_loads_total")
                           .Help("RepositoryModelLoad calls, by model and result (gRPC status "
                                 "code name).")
                           .Register(*registry_);
  inference_queue_length_ = &prometheus::BuildGauge()
                                 .Name("flashtick_inference_queue_length")
                                 .Help("Inference requests queued for or running on a worker.")
                                 .Register(*registry_);
  stream_tick_duration_seconds_ = &prometheus::BuildHistogram()
                                       .Name("flashtick_stream_tick_duration_seconds")
                                       .Help("Per-tick latency on TickStream, arrival to answer.")
                                       .Register(*registry_);
  active_streams_ = &prometheus::BuildGauge()
                         .Name("flashtick_active_streams")
                         .Help("Open TickStream sessions.")
                         .Register(*registry_);
  stream_refusals_ = &prometheus::BuildCounter()
                          .Name("flashtick_stream_refusals_total")
                          .Help("Tick streams refused by a limit, by reason (server_limit, "
                                "client_limit, memory).")
                          .Register(*registry_);
  connection_refusals_ = &prometheus::BuildCounter()
                              .Name("flashtick_connection_refusals_total")
                              .Help("gRPC connections closed as soon as they were accepted, by "
                                    "reason (max_connections: --max-connections reached; "
                                    "descriptors: no file descriptor left).")
                              .Register(*registry_);
  stream_idle_closed_ = &prometheus::BuildCounter()
                             .Name("flashtick_stream_idle_closed_total")
                             .Help("Tick streams ended for sending nothing within the idle "
                                   "timeout.")
                             .Register(*registry_);
  stream_memory_reserved_ = &prometheus::BuildGauge()
                                 .Name("flashtick_stream_memory_reserved_bytes")
                                 .Help("Memory the open tick-stream sessions reserved (a whole "
                                       "day each).")
                                 .Register(*registry_);
  stream_memory_limit_ = &prometheus::BuildGauge()
                              .Name("flashtick_stream_memory_limit_bytes")
                              .Help("Limit on the memory all tick-stream sessions reserve.")
                              .Register(*registry_);
  experiment_refusals_ = &prometheus::BuildCounter()
                              .Name("flashtick_experiment_refusals_total")
                              .Help("SubmitSweep calls refused by the per-client limit on "
                                    "queued and running experiments.")
                              .Register(*registry_);
  train_loss_ = &prometheus::BuildGauge()
                     .Name("flashtick_train_loss")
                     .Help("Training loss (cross-entropy) of the experiment arm's latest step.")
                     .Register(*registry_);
  train_step_seconds_ = &prometheus::BuildHistogram()
                             .Name("flashtick_train_step_seconds")
                             .Help("Wall-clock per optimizer step of an experiment arm, by kind: refresh (a Sophia-H Hessian-refresh step) or plain.")
                             .Register(*registry_);
  train_steps_total_ = &prometheus::BuildCounter()
                            .Name("flashtick_train_steps_total")
                            .Help("Optimizer steps taken by an experiment arm.")
                            .Register(*registry_);
  train_arm_running_ = &prometheus::BuildGauge()
                            .Name("flashtick_train_arm_running")
                            .Help("1 while the experiment arm trains, else 0.")
                            .Register(*registry_);
  train_gpu_peak_bytes_ = &prometheus::BuildGauge()
                               .Name("flashtick_train_gpu_peak_bytes")
                               .Help("Peak backend memory of the arm's steps (host memory on CPU).")
                               .Register(*registry_);
  experiments_ = &prometheus::BuildGauge()
                      .Name("flashtick_experiments")
                      .Help("Experiments in the store, by state.")
                      .Register(*registry_);
  // Zero until the experiment store reports (and without one: none in any state).
  for (const char* state : {"queued", "running", "succeeded", "failed", "cancelled"}) {
    experiments_->Add({{"state", state}}).Set(0);
  }
  sweep_arm_gpu_ = &prometheus::BuildGauge()
                        .Name("flashtick_sweep_arm_gpu")
                        .Help("GPU index the sweep arm was placed on (-1: the CPU).")
                        .Register(*registry_);
  sweep_gpus_busy_ = &prometheus::BuildGauge()
                          .Name("flashtick_sweep_gpus_busy")
                          .Help("GPUs holding a sweep arm now.")
                          .Register(*registry_);
  sweep_gpus_ = &prometheus::BuildGauge()
                     .Name("flashtick_sweep_gpus")
                     .Help("GPUs the sweep scheduler places arms on (0 on the CPU).")
                     .Register(*registry_);
}

void Metrics::RecordRequest(const std::string& model, const std::string& method,
                            const std::string& code, double seconds) {
  requests_total_->Add({{"model", model}, {"method", method}, {"code", code}}).Increment();
  request_duration_seconds_->Add({{"model", model}, {"method", method}}, LatencyBuckets())
      .Observe(seconds);
}

void Metrics::RecordInference(const std::string& model, int64_t rows, int64_t steps) {
  auto& lengths = request_sequence_length_->Add({{"model", model}}, LengthBuckets());
  for (int64_t r = 0; r < rows; ++r) lengths.Observe(static_cast<double>(steps));
  ticks_total_->Add({{"model", model}}).Increment(static_cast<double>(rows * steps));
}

void Metrics::RecordBatch(const std::string& model, int64_t requests) {
  batch_size_->Add({{"model", model}}, BatchBuckets()).Observe(static_cast<double>(requests));
}

void Metrics::RecordQueueAndCompute(const std::string& model, const std::string& method,
                                    double queue_seconds, double compute_seconds) {
  const prometheus::Labels labels{{"model", model}, {"method", method}};
  queue_duration_seconds_->Add(labels, LatencyBuckets()).Observe(queue_seconds);
  compute_duration_seconds_->Add(labels, LatencyBuckets()).Observe(compute_seconds);
}

void Metrics::RecordRequestPeakMemory(const std::string& model, const std::string& method,
                                      int64_t peak_bytes) {
  request_gpu_peak_bytes_->Add({{"model", model}, {"method", method}}, MemoryBuckets())
      .Observe(static_cast<double>(peak_bytes));
}

void Metrics::SetModelInfo(const std::string& model, const std::string& version,
                           const std::string& kernel_path, const std::string& device) {
  model_info_
      ->Add({{"model", model}, {"version", version}, {"kernel_path", kernel_path},
             {"device", device}})
      .Set(1);
}

void Metrics::SetInferenceQueueLength(int64_t length) {
  inference_queue_length_->Add({}).Set(static_cast<double>(length));
}

void Metrics::RecordStreamTick(const std::string& model, double seconds) {
  stream_tick_duration_seconds_->Add({{"model", model}}, LatencyBuckets()).Observe(seconds);
}

void Metrics::AddActiveStreams(int delta) { active_streams_->Add({}).Increment(delta); }

void Metrics::RecordConnectionRefused(const std::string& reason) {
  connection_refusals_->Add({{"reason", reason}}).Increment();
}

void Metrics::RecordStreamRefused(const std::string& reason) {
  stream_refusals_->Add({{"reason", reason}}).Increment();
}

void Metrics::RecordStreamIdleClosed(int count) { stream_idle_closed_->Add({}).Increment(count); }

void Metrics::SetStreamMemory(int64_t reserved_bytes, int64_t limit_bytes) {
  stream_memory_reserved_->Add({}).Set(static_cast<double>(reserved_bytes));
  stream_memory_limit_->Add({}).Set(static_cast<double>(limit_bytes));
}

void Metrics::RecordExperimentRefused() { experiment_refusals_->Add({}).Increment(); }

void Metrics::RecordTrainStep(const std::string& experiment, const std::string& arm, double loss,
                              double seconds, int64_t peak_bytes, bool hessian_refreshed) {
  const prometheus::Labels labels{{"experiment", experiment}, {"arm", arm}};
  train_loss_->Add(labels).Set(loss);
  prometheus::Labels timed = labels;
  timed["kind"] = hessian_refreshed ? "refresh" : "plain";
  train_step_seconds_->Add(timed, LatencyBuckets()).Observe(seconds);
  train_steps_total_->Add(labels).Increment();
  train_gpu_peak_bytes_->Add(labels).Set(static_cast<double>(peak_bytes));
}

void Metrics::SetArmRunning(const std::string& experiment, const std::string& arm, bool running) {
  train_arm_running_->Add({{"experiment", experiment}, {"arm", arm}}).Set(running ? 1 : 0);
}

void Metrics::SetExperiments(const std::string& state, int64_t count) {
  experiments_->Add({{"state", state}}).Set(static_cast<double>(count));
}

void Metrics::SetArmGpu(const std::string& experiment, const std::string& arm, int gpu) {
  sweep_arm_gpu_->Add({{"experiment", experiment}, {"arm", arm}}).Set(gpu);
}

namespace {

template <typename T>
void RemoveSeries(prometheus::Family<T>* family, const prometheus::Labels& labels) {
  if (!family->Has(labels)) return;
  family->Remove(&family->Add(labels));
}

// Histograms need their buckets to be added; Add returns the existing one.
void RemoveHistogram(prometheus::Family<prometheus::Histogram>* family,
                     const prometheus::Labels& labels) {
  if (!family->Has(labels)) return;
  family->Remove(&family->Add(labels, prometheus::Histogram::BucketBoundaries{}));
}

}  // namespace

void Metrics::RetireArm(const std::string& experiment, const std::string& arm) {
  const prometheus::Labels labels{{"experiment", experiment}, {"arm", arm}};
  RemoveSeries(train_loss_, labels);
  for (const char* kind : {"plain", "refresh"}) {
    prometheus::Labels timed = labels;
    timed["kind"] = kind;
    RemoveHistogram(train_step_seconds_, timed);
  }
  RemoveSeries(train_steps_total_, labels);
  RemoveSeries(train_arm_running_, labels);
  RemoveSeries(train_gpu_peak_bytes_, labels);
  RemoveSeries(sweep_arm_gpu_, labels);
}

void Metrics::RemoveModelInfo(const std::string& model, const std::string& version,
                              const std::string& kernel_path, const std::string& device) {
  RemoveSeries(model_info_, {{"model", model}, {"version", version},
                             {"kernel_path", kernel_path}, {"device", device}});
}

void Metrics::RecordModelLoad(const std::string& model, const std::string& result) {
  model_loads_total_->Add({{"model", model}, {"result", result}}).Increment();
}

void Metrics::SetSweepGpus(int busy, int total) {
  sweep_gpus_busy_->Add({}).Set(busy);
  sweep_gpus_->Add({}).Set(total);
}

}  // namespace flashtick
