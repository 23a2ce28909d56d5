// flashtickd flags (see server_options.h).
#include "server/server_options.h"

#include <climits>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "kernels/attention_impl_flag.h"

namespace flashtick {

void AddServerFlags(CLI::App* app, ServerOptions* o) {
  app->add_option("--listen", o->listen, "gRPC listen address host:port (port 0: any free port)")
      ->capture_default_str();
  app->add_option("--metrics-port", o->metrics_port,
                  "Prometheus /metrics port on the listen host (0: any free port, -1: off)")
      ->capture_default_str();
  app->add_option("--model-repository", o->model_repository,
                  "model repository laid out as <name>/<version>/{config.json,model.safetensors}")
      ->capture_default_str();
  app->add_option("--device", o->device, "cpu, cuda or auto (cuda when a GPU is present)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  AddAttentionImplFlag(app);
  app->add_option("--max-seq-len", o->max_seq_len,
                  "largest sequence length N accepted; longer requests get RESOURCE_EXHAUSTED")
      ->capture_default_str();
  app->add_option("--threads", o->threads, "CPU backend threads (0: all cores)")
      ->capture_default_str();
  app->add_option("--serve-stream-priority", o->serve_stream_priority,
                  "CUDA stream priority of inference: high (ahead of sweep training) or normal")
      ->check(CLI::IsMember({"high", "normal"}))
      ->capture_default_str();
  app->add_flag("--decode-graphs,!--no-decode-graphs", o->decode_graphs,
               "tick streams replay each decode step as one captured graph (CUDA graphs), "
               "captured again when a session's cache grows; a capture that fails falls back "
               "to launching op by op")
      ->capture_default_str();
  app->add_option("--max-message-bytes", o->max_message_bytes,
                  "largest gRPC message sent or received (a 23,400-step day is ~0.56 MB per row)")
      ->capture_default_str();
  app->add_option("--max-loaded-models", o->max_loaded_models,
                  "models served at once (startup and RepositoryModelLoad); "
                  "one more is RESOURCE_EXHAUSTED; 0: no limit")
      ->capture_default_str();
  app->add_option("--workers", o->workers, "inference worker threads")->capture_default_str();
  app->add_option("--max-queue", o->max_queue,
                  "inference requests queued before RESOURCE_EXHAUSTED")
      ->capture_default_str();
  app->add_option("--max-queue-mb", o->max_queue_mb,
                  "memory queued inference requests may hold together (each counted once: its "
                  "tensor, moved out of the request, plus what remains of the request)")
      ->capture_default_str();
  app->add_option("--max-request-rows", o->max_request_rows,
                  "largest B·N (rows × steps) one ModelInfer may ask for")
      ->capture_default_str();
  app->add_option("--pad-length-to", o->pad_length_to,
                  "ModelInfer: run each forward at its length rounded up to a multiple of this "
                  "(right padding changes no answer; never past the model's max_context), so "
                  "a backend meets a bounded set of lengths: cuDNN builds a graph for each new "
                  "one, ~40 ms on an H100 (docs/kernels/cudnn.md); 1: every length as asked")
      ->capture_default_str();
  app->add_flag("--warm-up,!--no-warm-up", o->warm_up,
                "before answering, run forwards of each model at every length "
                "--pad-length-to allows and every row count up to --batch-max-size, so the "
                "attention dispatcher's timing and cuDNN's graph builds happen at start-up "
                "(or when RepositoryModelLoad loads a version, before it serves) rather than "
                "in a client's request; needs --pad-length-to > 1")
      ->capture_default_str();
  app->add_option("--batch-max-delay-us", o->batch_max_delay_us,
                  "ModelInfer batching: longest wait (microseconds, from the first request's "
                  "arrival) for requests of the same model and length bucket, applied only "
                  "while another batch is computing (an idle worker runs a request at once "
                  "with whatever is already queued); 0: no batching")
      ->capture_default_str();
  app->add_option("--batch-max-size", o->batch_max_size,
                  "ModelInfer batching: most requests merged into one forward (1: no batching)")
      ->capture_default_str();
  app->add_option("--max-pinned-staging-mb", o->max_pinned_staging_mb,
                  "ModelInfer batching: host memory kept for stacking merged batches, "
                  "page-locked on CUDA so a batch's upload is one DMA; a batch that finds no "
                  "room is stacked in ordinary memory (same answer, slower copy); 0: never pin")
      ->capture_default_str();
  app->add_option("--shutdown-grace-seconds", o->shutdown_grace_seconds,
                  "on SIGTERM/SIGINT, time in-flight requests get to finish")
      ->capture_default_str();
  app->add_option("--experiment-dir", o->experiment_dir,
                  "directory of the experiment store (SQLite), sweep checkpoints and reports; "
                  "empty: experiments disabled")
      ->capture_default_str();
  app->add_option("--max-streams", o->max_streams,
                  "open tick streams on this server; the next is refused (RESOURCE_EXHAUSTED)")
      ->capture_default_str();
  app->add_option("--max-streams-per-client", o->max_streams_per_client,
                  "open tick streams per client (its token, TLS identity, or else its address)")
      ->capture_default_str();
  app->add_option("--stream-idle-timeout-seconds", o->stream_idle_timeout_seconds,
                  "a tick stream that sends nothing for this long is ended (DEADLINE_EXCEEDED)")
      ->capture_default_str();
  app->add_option("--stream-memory-mb", o->stream_memory_mb,
                  "memory all tick-stream sessions may reserve together; each reserves a whole "
                  "day (feature rows, key/value cache) when it opens")
      ->capture_default_str();
  app->add_option("--max-experiments-per-client", o->max_experiments_per_client,
                  "queued plus running experiments per client; SubmitSweep past it is "
                  "RESOURCE_EXHAUSTED")
      ->capture_default_str();
  app->add_option("--experiment-workers", o->experiment_workers,
                  "sweeps that run at the same time (each arm owns the device)")
      ->capture_default_str();
  app->add_option("--report-python", o->report_python,
                  "Python with matplotlib that draws the sweep report's plots (empty: no plots)")
      ->capture_default_str();
  app->add_option("--plot-script", o->plot_script,
                  "plot_report.py to run (default: $FLASHTICK_PLOT_SCRIPT, else found relative to "
                  "the binary: the install tree's share/flashtick/, or the build tree's)")
      ->capture_default_str();
  app->add_option("--metrics-threads", o->metrics_threads,
                  "threads serving /metrics (each slow scraper holds one)")
      ->capture_default_str();
  app->add_option("--metrics-request-timeout-seconds", o->metrics_request_timeout_seconds,
                  "a /metrics client that has not sent its request by then is dropped")
      ->capture_default_str();
  app->add_option("--handshake-timeout-seconds", o->handshake_timeout_seconds,
                  "a connection that has not finished the HTTP/2 handshake by then is closed")
      ->capture_default_str();
  app->add_option("--max-connection-idle-seconds", o->max_connection_idle_seconds,
                  "a connection with no RPC for this long is closed (GOAWAY)")
      ->capture_default_str();
  app->add_option("--keepalive-min-interval-seconds", o->keepalive_min_interval_seconds,
                  "clients that ping more often than this are disconnected")
      ->capture_default_str();
  app->add_option("--max-connections", o->max_connections,
                  "TCP connections the gRPC port holds at once; more are closed at accept "
                  "(0: no cap; lowered so that a quarter of the open-file limit, at most 256 "
                  "descriptors, stays free)")
      ->capture_default_str();
  app->add_option("--data-root", o->data_root,
                  "directory sweeps may read CSV data from (data.csv.paths resolve inside it; "
                  "empty: CSV sources are refused)");
  app->add_option("--max-data-file-mb", o->max_data_file_mb,
                  "largest data file a sweep reads, in MiB")
      ->capture_default_str();
  app->add_option("--max-config-bytes", o->max_config_bytes,
                  "largest sweep configuration SubmitSweep accepts")
      ->capture_default_str();
  app->add_option("--experiment-memory-mb", o->experiment_memory_mb,
                  "memory a sweep's estimate may reach before SubmitSweep refuses it "
                  "(0: three quarters of physical memory)")
      ->capture_default_str();
  app->add_option("--max-resume-attempts", o->max_resume_attempts,
                  "times an experiment is started without ending cleanly (e.g. the process "
                  "died) before it is marked FAILED instead of resumed")
      ->capture_default_str();
  app->add_option("--operator-client", o->operator_clients,
                  "client name (token#N, tls:NAME, peer:HOST) that may see, cancel and delete "
                  "every experiment; repeatable. Others see only their own");
  app->add_option("--sweep-arm-runner", o->sweep_arm_runner,
                  "where sweep arms train: local (threads here) or kubernetes (an Indexed Job "
                  "per experiment run, one pod per arm; docs/deploy.md)")
      ->check(CLI::IsMember({"local", "kubernetes"}))
      ->capture_default_str();
  app->add_option("--k8s-api-server", o->k8s_api_server,
                  "Kubernetes API server URL (empty: in-cluster, "
                  "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)");
  app->add_option("--k8s-token-file", o->k8s_token_file,
                  "bearer token for the API server, read on every request (empty: none)")
      ->capture_default_str();
  app->add_option("--k8s-ca-file", o->k8s_ca_file,
                  "CA bundle the API server's certificate must chain to (empty: system CAs)")
      ->capture_default_str();
  app->add_option("--k8s-namespace", o->k8s_namespace,
                  "namespace of the arm Jobs (empty: the service account's namespace)");
  app->add_option("--k8s-image", o->k8s_image,
                  "image of the arm pods (it must have --k8s-sweep-binary); required with "
                  "--sweep-arm-runner=kubernetes");
  app->add_option("--k8s-image-pull-policy", o->k8s_image_pull_policy, "of the arm pods")
      ->check(CLI::IsMember({"Always", "IfNotPresent", "Never"}))
      ->capture_default_str();
  app->add_option("--k8s-sweep-binary", o->k8s_sweep_binary,
                  "the arm pods' command: flashtick_sweep in --k8s-image")
      ->capture_default_str();
  app->add_option("--k8s-pvc", o->k8s_pvc,
                  "ReadWriteMany PersistentVolumeClaim holding --experiment-dir, mounted in "
                  "every arm pod; required with --sweep-arm-runner=kubernetes");
  app->add_option("--k8s-pvc-mount-path", o->k8s_pvc_mount_path,
                  "where arm pods mount --k8s-pvc: where this server mounts it (empty: "
                  "--experiment-dir), so experiment directories have one path everywhere");
  app->add_option("--k8s-arm-device", o->k8s_arm_device,
                  "where arm pods train a sweep whose device is auto (cuda: one GPU per pod); "
                  "the server's own --device serves inference here and may be cpu")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  app->add_option("--k8s-node-selector", o->k8s_node_selector,
                  "KEY=VALUE label an arm pod's node must carry (repeatable; empty: none), e.g. "
                  "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB to pin arms to one GPU model");
  app->add_option("--k8s-parallelism", o->k8s_parallelism,
                  "arm pods of one experiment at once (0: its max_parallel_arms); with "
                  "replicas_per_arm W > 1, arms at once (W pods each)")
      ->capture_default_str();
  app->add_option("--k8s-rendezvous-port", o->k8s_rendezvous_port,
                  "MASTER_PORT of a multi-pod arm (replicas_per_arm > 1): rank 0's TCP store, "
                  "reached through the arm's headless Service")
      ->capture_default_str();
  app->add_option("--k8s-backoff-limit-per-index", o->k8s_backoff_limit_per_index,
                  "times one arm's pod is retried before the arm fails")
      ->capture_default_str();
  app->add_option("--k8s-ttl-seconds-after-finished", o->k8s_ttl_seconds_after_finished,
                  "how long Kubernetes keeps a finished arm Job")
      ->capture_default_str();
  app->add_option("--k8s-poll-seconds", o->k8s_poll_seconds,
                  "how often the arm Job's status and the arms' state are read")
      ->capture_default_str();
  app->add_option("--k8s-request-timeout-seconds", o->k8s_request_timeout_seconds,
                  "deadline of one Kubernetes API request")
      ->capture_default_str();
  app->add_option("--k8s-max-response-bytes", o->k8s_max_response_bytes,
                  "largest Kubernetes API response read")
      ->capture_default_str();
  app->add_option("--tls-cert", o->tls_cert,
                  "PEM certificate chain for TLS on the gRPC port (with --tls-key; "
                  "default: plaintext)");
  app->add_option("--tls-key", o->tls_key, "PEM private key of --tls-cert");
  app->add_option("--tls-client-ca", o->tls_client_ca,
                  "PEM CA: require and verify client certificates signed by it (mutual TLS)");
  app->add_option("--auth-token-file", o->auth_token_file,
                  "bearer tokens, one per line ('#' comments): flashtick.v1.Experiments then "
                  "needs 'authorization: Bearer <token>'");
  app->add_flag("--auth-inference", o->auth_inference,
                "with --auth-token-file, require a token for inference and the tick stream too");
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
ServerOptions::K8sNodeSelector() const {
  if (k8s_node_selector.size() > 16) {
    return absl::InvalidArgumentError("--k8s-node-selector: at most 16 labels");
  }
  std::vector<std::pair<std::string, std::string>> labels;
  for (const std::string& label : k8s_node_selector) {
    if (label.empty()) continue;  // a manifest's unset $(VAR): no label
    const size_t eq = label.find('=');
    // A label key is at most 253 + 1 + 63 characters (prefix/name), its value 63.
    if (eq == 0 || eq == std::string::npos || eq > 317 || label.size() - eq - 1 > 63) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--k8s-node-selector '", label, "' is not KEY=VALUE (a node label and its value)"));
    }
    labels.emplace_back(label.substr(0, eq), label.substr(eq + 1));
  }
  return labels;
}

absl::Status ServerOptions::ValidateK8s() const {
  if (sweep_arm_runner != "local" && sweep_arm_runner != "kubernetes") {
    return absl::InvalidArgumentError("--sweep-arm-runner must be local or kubernetes");
  }
  if (sweep_arm_runner == "local") return absl::OkStatus();
  if (experiment_dir.empty()) {
    return absl::InvalidArgumentError("--sweep-arm-runner=kubernetes needs --experiment-dir");
  }
  if (k8s_image.empty() || k8s_pvc.empty() || k8s_sweep_binary.empty()) {
    return absl::InvalidArgumentError(
        "--sweep-arm-runner=kubernetes needs --k8s-image, --k8s-pvc and --k8s-sweep-binary");
  }
  if (!k8s_pvc_mount_path.empty() && k8s_pvc_mount_path.front() != '/') {
    return absl::InvalidArgumentError("--k8s-pvc-mount-path must be an absolute path");
  }
  if (absl::Status s = K8sNodeSelector().status(); !s.ok()) return s;
  if (k8s_parallelism < 0 || k8s_parallelism > 10000) {
    return absl::InvalidArgumentError("--k8s-parallelism must be between 0 and 10000");
  }
  if (k8s_rendezvous_port < 1 || k8s_rendezvous_port > 65535) {
    return absl::InvalidArgumentError("--k8s-rendezvous-port must be between 1 and 65535");
  }
  if (k8s_backoff_limit_per_index < 0 || k8s_backoff_limit_per_index > 100) {
    return absl::InvalidArgumentError("--k8s-backoff-limit-per-index must be between 0 and 100");
  }
  if (k8s_ttl_seconds_after_finished < 0) {
    return absl::InvalidArgumentError("--k8s-ttl-seconds-after-finished must be ≥ 0");
  }
  if (!(k8s_poll_seconds >= 0.05) || k8s_poll_seconds > 3600) {
    return absl::InvalidArgumentError("--k8s-poll-seconds must be between 0.05 and 3600");
  }
  if (!(k8s_request_timeout_seconds > 0) || k8s_request_timeout_seconds > 600) {
    return absl::InvalidArgumentError("--k8s-request-timeout-seconds must be > 0 and ≤ 600");
  }
  if (k8s_max_response_bytes < 4096 || k8s_max_response_bytes > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError("--k8s-max-response-bytes must be between 4096 and 1 GiB");
  }
  return absl::OkStatus();
}

absl::Status ServerOptions::Validate() const {
  if (listen.rfind(':') == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen '", listen, "' has no port; use host:port, e.g. 0.0.0.0:8001"));
  }
  if (metrics_port < -1 || metrics_port > 65535) {
    return absl::InvalidArgumentError("--metrics-port must be -1 (off), 0 (any) or 1..65535");
  }
  if (max_seq_len < 1) return absl::InvalidArgumentError("--max-seq-len must be ≥ 1");
  if (threads < 0) return absl::InvalidArgumentError("--threads must be ≥ 0 (0: all cores)");
  if (serve_stream_priority != "high" && serve_stream_priority != "normal") {
    return absl::InvalidArgumentError(absl::StrCat("--serve-stream-priority must be high or normal, got '",
                                                   serve_stream_priority, "'"));
  }
  if (max_message_bytes < (1 << 20) || max_message_bytes > INT_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-message-bytes must be between 1 MiB and ", INT_MAX,
                     " (gRPC's limit is an int)"));
  }
  if (max_loaded_models < 0) {
    return absl::InvalidArgumentError("--max-loaded-models must be ≥ 0 (0: no limit)");
  }
  if (workers < 1) return absl::InvalidArgumentError("--workers must be ≥ 1");
  if (max_queue < 1) return absl::InvalidArgumentError("--max-queue must be ≥ 1");
  if (max_queue_mb < 1) return absl::InvalidArgumentError("--max-queue-mb must be ≥ 1");
  if (max_request_rows < 1) return absl::InvalidArgumentError("--max-request-rows must be ≥ 1");
  if (pad_length_to < 1 || pad_length_to > 1'000'000) {
    return absl::InvalidArgumentError(
        "--pad-length-to must be between 1 (no padding) and 1,000,000 steps");
  }
  if (warm_up && pad_length_to <= 1) {
    return absl::InvalidArgumentError(
        "--warm-up needs --pad-length-to > 1: it warms each length a padded forward can "
        "run at, and without padding every length is one");
  }
  if (batch_max_delay_us < 0 || batch_max_delay_us > 10'000'000) {
    return absl::InvalidArgumentError(
        "--batch-max-delay-us must be between 0 (no batching) and 10,000,000 (10 s)");
  }
  if (batch_max_size < 1 || batch_max_size > 1024) {
    return absl::InvalidArgumentError("--batch-max-size must be between 1 (no batching) and 1024");
  }
  if (max_pinned_staging_mb < 0 || max_pinned_staging_mb > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(
        "--max-pinned-staging-mb must be between 0 (off) and 1,048,576 (1 TiB)");
  }
  if (shutdown_grace_seconds < 0) {
    return absl::InvalidArgumentError("--shutdown-grace-seconds must be ≥ 0");
  }
  if (max_streams < 1) return absl::InvalidArgumentError("--max-streams must be ≥ 1");
  if (max_streams_per_client < 1 || max_streams_per_client > max_streams) {
    return absl::InvalidArgumentError(
        "--max-streams-per-client must be between 1 and --max-streams");
  }
  if (!(stream_idle_timeout_seconds > 0) || stream_idle_timeout_seconds > 7 * 86400) {
    return absl::InvalidArgumentError(
        "--stream-idle-timeout-seconds must be > 0 and at most a week (604800)");
  }
  if (stream_memory_mb < 1) return absl::InvalidArgumentError("--stream-memory-mb must be ≥ 1");
  if (max_experiments_per_client < 1) {
    return absl::InvalidArgumentError("--max-experiments-per-client must be ≥ 1");
  }
  if (experiment_workers < 1) {
    return absl::InvalidArgumentError("--experiment-workers must be ≥ 1");
  }
  if (!(handshake_timeout_seconds > 0) || !(max_connection_idle_seconds > 0) ||
      !(keepalive_min_interval_seconds > 0)) {
    return absl::InvalidArgumentError(
        "--handshake-timeout-seconds, --max-connection-idle-seconds and "
        "--keepalive-min-interval-seconds must be > 0");
  }
  if (max_connections < 0) {
    return absl::InvalidArgumentError("--max-connections must be ≥ 0 (0: no cap)");
  }
  if (metrics_threads < 1 || metrics_threads > 256) {
    return absl::InvalidArgumentError("--metrics-threads must be between 1 and 256");
  }
  if (!(metrics_request_timeout_seconds > 0)) {
    return absl::InvalidArgumentError("--metrics-request-timeout-seconds must be > 0");
  }
  if (max_data_file_mb < 1) return absl::InvalidArgumentError("--max-data-file-mb must be ≥ 1");
  if (max_config_bytes < 1024) {
    return absl::InvalidArgumentError("--max-config-bytes must be ≥ 1024");
  }
  if (experiment_memory_mb < 0) {
    return absl::InvalidArgumentError("--experiment-memory-mb must be ≥ 0 (0: 3/4 of RAM)");
  }
  if (max_resume_attempts < 1) {
    return absl::InvalidArgumentError("--max-resume-attempts must be ≥ 1");
  }
  if (absl::Status s = ValidateK8s(); !s.ok()) return s;
  if (tls_cert.empty() != tls_key.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key go together: give both (TLS) or neither (plaintext)");
  }
  if (!tls_client_ca.empty() && tls_cert.empty()) {
    return absl::InvalidArgumentError(
        "--tls-client-ca (mutual TLS) needs TLS: add --tls-cert and --tls-key");
  }
  if (auth_inference && auth_token_file.empty()) {
    return absl::InvalidArgumentError("--auth-inference needs --auth-token-file");
  }
  return absl::OkStatus();
}

std::string ServerOptions::ListenHost() const {
  std::string host = listen.substr(0, listen.rfind(':'));
  return host.empty() ? "0.0.0.0" : host;
}

}  // namespace flashtick
