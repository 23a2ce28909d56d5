// ServerOptions: flashtickd's command-line flags (CLI11), their defaults and
// their validation. Defaults follow Triton's ports (gRPC 8001, metrics 8002).
// max_message_bytes is raised from gRPC's 4 MiB default so a day of ticks fits:
// 23,400 steps × 6 features × 4 bytes ≈ 0.56 MB per row of the batch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace CLI {
class App;
}

namespace flashtick {

struct ServerOptions {
  std::string listen = "0.0.0.0:8001";        // host:port; port 0 picks a free one
  int metrics_port = 8002;                    // 0 picks a free one; -1 disables
  int metrics_threads = 8;                    // civetweb workers serving /metrics
  double metrics_request_timeout_seconds = 5; // a scraper silent this long is dropped
  std::string model_repository = "models";    // <name>/<version>/{config.json,...}
  // Models (names, all their versions) served at once; RepositoryModelLoad of one
  // more answers RESOURCE_EXHAUSTED, a larger repository fails startup. 0 = no limit.
  int max_loaded_models = 64;
  std::string device = "auto";                // cpu | cuda | auto
  int64_t max_seq_len = 32768;                // largest N accepted (RESOURCE_EXHAUSTED above)
  int threads = 0;                            // CPU backend threads; 0 = all cores
  // CUDA stream priority of the serving backend: "high" (the device's greatest, so a
  // request's kernels start ahead of a sweep arm's queued ones) or "normal".
  std::string serve_stream_priority = "high";
  // Tick streams replay each session's decode step from a capture (a CUDA graph) made
  // once per cache capacity (model/decode_state.h, DecodeOptions::capture).
  bool decode_graphs = false;
  int64_t max_message_bytes = 64LL << 20;     // gRPC send/receive limit
  int workers = 1;                            // inference worker threads
  int max_queue = 64;                         // queued inference requests before refusing
  int64_t max_queue_mb = 2048;                // bytes those requests may hold together
  int64_t max_request_rows = 8 * 32768;       // B·N of one ModelInfer
  // ModelInfer forwards run at a multiple of this length (right padding; 1: as asked),
  // bounding the lengths a backend meets (server/inference/batched_predict.h).
  int64_t pad_length_to = 1;
  // Before SERVING, forwards of each served model at every padded length and row count
  // up to batch_max_size (needs pad_length_to > 1; InferenceCore::WarmUp).
  bool warm_up = false;
  // ModelInfer batching (docs/serving.md): requests of one model and length bucket wait
  // up to this long (from the first one's arrival) to share a forward; 0: off.
  int64_t batch_max_delay_us = 250;
  int batch_max_size = 8;                     // requests per forward; 1: off
  // Host memory kept for stacking merged batches (page-locked on CUDA, so their upload is
  // one DMA: kernels/host_staging_pool.h); 0: stack in ordinary memory.
  int64_t max_pinned_staging_mb = 256;
  double shutdown_grace_seconds = 30;         // drain time on SIGTERM/SIGINT
  // Connection hygiene (docs/security.md): a connection that never completes the
  // HTTP/2 handshake, or sits idle, gives its file descriptor back.
  double handshake_timeout_seconds = 10;      // TCP connect to first HTTP/2 frames
  double max_connection_idle_seconds = 600;   // no RPC on the connection this long
  double keepalive_min_interval_seconds = 10; // client pings faster than this: GOAWAY
  int max_connections = 4096;                 // TCP connections the gRPC port holds; 0 = no cap
  // Tick-stream limits (server/stream/stream_admission.h).
  int max_streams = 256;                      // open tick streams on the server
  int max_streams_per_client = 32;            // of them per client (client_identity.h)
  double stream_idle_timeout_seconds = 600;   // silence after which a stream is ended
  int64_t stream_memory_mb = 8192;            // memory all sessions reserve together
  // Experiments (docs/research/sweeps.md): "" disables them (the RPCs say how to enable them).
  std::string experiment_dir;                 // SQLite store, checkpoints and reports
  int experiment_workers = 1;                 // sweeps run at once
  int max_experiments_per_client = 8;         // queued + running per client
  std::string report_python = "python3";      // draws the report plots ("" = none)
  std::string plot_script;                    // "" = DefaultPlotScript() (plot_runner.h)
  // Untrusted-input limits of the Experiments service (docs/security.md).
  std::string data_root;                      // CSV sources confined here; "" = CSV off
  int64_t max_data_file_mb = 1024;            // largest data file a sweep reads
  int64_t max_config_bytes = 256 << 10;       // largest SubmitSweep config
  int64_t experiment_memory_mb = 0;           // estimate a sweep may need; 0 = 3/4 of RAM
  int max_resume_attempts = 3;                // starts without a clean end, then FAILED
  std::vector<std::string> operator_clients;  // client names that see every experiment
  // Where sweep arms train (docs/deploy.md, "Sweep arms as Kubernetes Jobs"): "local"
  // (threads of this process) or "kubernetes" (an Indexed Job per experiment run,
  // server/experiments/k8s_arm_executor.h). The k8s_* flags serve "kubernetes" only.
  std::string sweep_arm_runner = "local";
  std::string k8s_api_server;                 // "" = in-cluster (KUBERNETES_SERVICE_HOST/PORT)
  std::string k8s_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string k8s_ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string k8s_namespace;                  // "" = the service account's namespace file
  std::string k8s_image;                      // the arm pods' image (has flashtick_sweep)
  std::string k8s_image_pull_policy = "IfNotPresent";
  std::string k8s_sweep_binary = "flashtick_sweep";  // in that image
  std::string k8s_pvc;                        // the ReadWriteMany claim holding experiment_dir
  std::string k8s_pvc_mount_path;             // where pods mount it; "" = experiment_dir
  std::string k8s_arm_device = "cuda";        // arm pods' device for sweeps that say "auto"
  std::vector<std::string> k8s_node_selector;  // KEY=VALUE: the arm pods' nodeSelector
  int k8s_parallelism = 0;                    // arm pods (multi-pod: arms) at once; 0 = config
  int k8s_rendezvous_port = 29500;            // a multi-pod arm's MASTER_PORT
  int k8s_backoff_limit_per_index = 1;        // retries of one arm's pod
  int k8s_ttl_seconds_after_finished = 86400; // finished Jobs kept this long
  double k8s_poll_seconds = 5;                // Job status and arm state reads
  double k8s_request_timeout_seconds = 30;    // one API request
  int64_t k8s_max_response_bytes = 8 << 20;   // one API response
  // Security (docs/security.md): TLS when both PEM files are given;
  // mutual TLS with tls_client_ca; bearer tokens with auth_token_file.
  std::string tls_cert;                       // PEM certificate chain of the gRPC port
  std::string tls_key;                        // PEM private key of tls_cert
  std::string tls_client_ca;                  // PEM CA clients' certificates must chain to
  std::string auth_token_file;                // one token per line; "" = no token auth
  bool auth_inference = false;                // tokens also for KServe v2 and TickStream

  // INVALID_ARGUMENT naming the flag and the accepted range.
  absl::Status Validate() const;
  // The --sweep-arm-runner and --k8s-* part of Validate.
  absl::Status ValidateK8s() const;
  // --k8s-node-selector as (key, value) pairs, empty entries dropped; INVALID_ARGUMENT
  // for an entry that is not KEY=VALUE or more than 16 of them.
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> K8sNodeSelector() const;
  // The host part of `listen` (the metrics endpoint binds to the same host).
  std::string ListenHost() const;
};

// Registers every flag on `app`, writing into `options`.
void AddServerFlags(CLI::App* app, ServerOptions* options);

}  // namespace flashtick
