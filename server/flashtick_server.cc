// flashtickd assembly and lifecycle (see flashtick_server.h).
#include "server/flashtick_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "server/auth/server_security.h"
#include "server/logging.h"
#include "server/experiments/sweep_memory_estimate.h"
#include "server/metrics/metrics_endpoint.h"
#include "ticks/data_file.h"
#include "research/report/plot_runner.h"

namespace flashtick {
namespace {

// Services reported individually by grpc.health.v1 (plus "" for the server).
constexpr const char* kHealthServices[] = {"inference.GRPCInferenceService",
                                           "flashtick.v1.TickStream"};

uint64_t OpenFileLimit() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return limit.rlim_cur;
}

// Raises the soft open-file limit to the hard one. Every gRPC connection holds a
// descriptor; at the usual soft limit of 1,024, a thousand idle TCP connects leave
// accept() failing with EMFILE, and gRPC 1.51 then stops accepting for good.
void RaiseOpenFileLimit() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t before = limit.rlim_cur;
  if (limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  LogInfo(absl::StrCat("open-file limit raised from ", before, " to ", limit.rlim_cur,
                       " (the hard limit)"));
}

int Millis(double seconds) { return static_cast<int>(std::min(seconds * 1000.0, 2.0e9)); }

}  // namespace

absl::StatusOr<std::unique_ptr<FlashtickServer>> FlashtickServer::Start(
    const ServerOptions& options) {
  return Start(options, {});
}

absl::StatusOr<std::unique_ptr<FlashtickServer>> FlashtickServer::Start(
    const ServerOptions& options, ExperimentSeams seams) {
  RETURN_IF_ERROR(options.Validate());
  RaiseOpenFileLimit();
  std::unique_ptr<FlashtickServer> server(new FlashtickServer(options));
  server->seams_ = std::move(seams);
  // TLS files and tokens first: a bad path fails before anything starts.
  std::shared_ptr<const TokenSet> tokens;
  ASSIGN_OR_RETURN(server->credentials_, BuildServerCredentials(options, &tokens));
  server->client_namer_ = std::make_unique<ClientNamer>(std::move(tokens));
  BackendOptions backend_options;
  backend_options.threads = options.threads;
  // Inference on a high-priority stream: a sweep's arms train on their own backends
  // (normal priority) on the same GPU, and a request's kernels start ahead of theirs.
  backend_options.stream_priority = options.serve_stream_priority == "high"
                                        ? StreamPriority::kHigh
                                        : StreamPriority::kNormal;
  ASSIGN_OR_RETURN(server->backend_, CreateBackend(options.device, backend_options));
  LogInfo(absl::StrCat("backend ", server->backend_->name(), " (--device ", options.device,
                       ", stream priority ", options.serve_stream_priority, ")"));
  ASSIGN_OR_RETURN(server->repository_,
                   ModelRepository::Load(options.model_repository, server->backend_.get(),
                                         options.max_loaded_models));
  server->metrics_ = std::make_unique<Metrics>();
  for (const ModelEntryPtr& entry : server->repository_->Entries()) {
    if (!entry->unavailable_reason.empty()) continue;  // refused at load: not served
    server->metrics_->SetModelInfo(entry->name, entry->version_string(), entry->kernel_path,
                                   entry->device);
  }
  Metrics* metrics = server->metrics_.get();
  BatchPolicy batching;
  batching.max_delay = absl::Microseconds(options.batch_max_delay_us);
  batching.max_size = options.batch_max_size;
  server->queue_ = std::make_unique<WorkQueue>(
      options.workers, options.max_queue,
      [metrics](int64_t length) { metrics->SetInferenceQueueLength(length); }, batching,
      /*reserved_pending=*/options.max_streams,  // one tick in flight per stream
      /*max_pending_bytes=*/options.max_queue_mb << 20);
  if (options.max_pinned_staging_mb > 0) {
    server->staging_ = std::make_unique<HostStagingPool>(
        server->backend_.get(), static_cast<size_t>(options.max_pinned_staging_mb) << 20);
  }
  server->core_ = std::make_unique<InferenceCore>(server->repository_.get(), options.max_seq_len,
                                                  options.max_request_rows, options.pad_length_to,
                                                  server->staging_.get());
  if (options.warm_up) {
    server->WarmUpModels();
    // Run-time loads come from gRPC and the sweep runner, both stopped (Shutdown, from
    // the destructor) before the server's members go.
    FlashtickServer* warm = server.get();
    server->repository_->set_prepare(
        [warm](const ModelEntry& entry) { warm->WarmUpModel(entry); });
  }
  server->model_control_ =
      std::make_unique<ModelControl>(server->repository_.get(), server->metrics_.get());
  RETURN_IF_ERROR(server->StartExperiments());
  RETURN_IF_ERROR(server->StartMetrics());
  RETURN_IF_ERROR(server->StartGrpc());
  server->ready_.store(true);
  // Unfinished experiments resume only once gRPC serves: whatever a resumed sweep
  // does, the server answers (and can cancel it) first.
  if (server->experiment_runner_ != nullptr) {
    RETURN_IF_ERROR(server->experiment_runner_->Start());
  }
  return server;
}

void FlashtickServer::WarmUpModels() {
  for (const ModelEntryPtr& entry : repository_->Entries()) {
    if (entry->unavailable_reason.empty()) WarmUpModel(*entry);
  }
}

void FlashtickServer::WarmUpModel(const ModelEntry& entry) {
  const auto start = std::chrono::steady_clock::now();
  const absl::StatusOr<int64_t> forwards = core_->WarmUp(entry, options_.batch_max_size);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (forwards.ok()) {
    LogInfo(absl::StrCat("warmed model '", entry.name, "' version ", entry.version_string(), ": ",
                         *forwards, " forwards (", core_->ForwardLengths(entry).size(),
                         " lengths, multiples of --pad-length-to ", options_.pad_length_to,
                         "; B up to --batch-max-size ", options_.batch_max_size, ") in ",
                         absl::StrFormat("%.2f", seconds), " s"));
  } else {
    LogWarning(absl::StrCat("warm-up of model '", entry.name, "' version ",
                            entry.version_string(), " failed after ",
                            absl::StrFormat("%.2f", seconds), " s (still served): ",
                            forwards.status().message()));
  }
}

absl::Status FlashtickServer::StartMetrics() {
  if (options_.metrics_port < 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(exposer_, StartMetricsEndpoint(options_.ListenHost(), options_.metrics_port,
                                                  options_.metrics_threads,
                                                  Millis(options_.metrics_request_timeout_seconds)));
  exposer_->RegisterCollectable(metrics_->registry());
  process_collector_ = std::make_shared<ProcessCollector>();
  exposer_->RegisterCollectable(process_collector_);
  memory_collector_ = std::make_shared<BackendMemoryCollector>(
      backend_.get(), BackendDeviceLabel(*backend_, BackendOptions{}.device_index));
  exposer_->RegisterCollectable(memory_collector_);
  const auto ports = exposer_->GetListeningPorts();
  metrics_port_ = ports.empty() ? options_.metrics_port : ports.front();
  return absl::OkStatus();
}

// --sweep-arm-runner=kubernetes: the API client and the executor that runs arms as
// Jobs (docs/deploy.md); nothing for local.
absl::Status FlashtickServer::StartArmExecutor() {
  if (options_.sweep_arm_runner != "kubernetes") return absl::OkStatus();
  K8sClientOptions client;
  client.api_server = options_.k8s_api_server;
  client.token_file = options_.k8s_token_file;
  client.ca_file = options_.k8s_ca_file;
  client.ns = options_.k8s_namespace;
  client.request_timeout_seconds = options_.k8s_request_timeout_seconds;
  client.max_response_bytes = options_.k8s_max_response_bytes;
  ASSIGN_OR_RETURN(k8s_client_, K8sClient::Create(std::move(client)));
  K8sArmOptions arms;
  arms.image = options_.k8s_image;
  arms.image_pull_policy = options_.k8s_image_pull_policy;
  arms.pvc = options_.k8s_pvc;
  const std::filesystem::path root = std::filesystem::absolute(options_.experiment_dir);
  arms.mount_path = options_.k8s_pvc_mount_path.empty() ? root.lexically_normal().string()
                                                        : options_.k8s_pvc_mount_path;
  arms.sweep_binary = options_.k8s_sweep_binary;
  arms.arm_device = options_.k8s_arm_device;
  ASSIGN_OR_RETURN(arms.node_selector, options_.K8sNodeSelector());
  arms.parallelism = options_.k8s_parallelism;
  arms.backoff_limit_per_index = options_.k8s_backoff_limit_per_index;
  arms.rendezvous_port = options_.k8s_rendezvous_port;
  arms.ttl_seconds_after_finished = options_.k8s_ttl_seconds_after_finished;
  arms.poll_seconds = options_.k8s_poll_seconds;
  k8s_arm_executor_ = std::make_unique<K8sArmExecutor>(k8s_client_.get(), std::move(arms));
  LogInfo(absl::StrCat("sweep arms run as Kubernetes Jobs in namespace ", k8s_client_->ns(),
                       " via ", k8s_client_->api_server(), " (image ", options_.k8s_image,
                       ", claim ", options_.k8s_pvc, ")"));
  return absl::OkStatus();
}

// The experiment store, queue and core (docs/research/sweeps.md); off without --experiment-dir.
absl::Status FlashtickServer::StartExperiments() {
  if (options_.experiment_dir.empty()) {
    LogInfo("experiments disabled (no --experiment-dir)");
    return absl::OkStatus();
  }
  DataFilePolicy data;
  data.confined = true;  // every sweep of this process is a client's
  data.root = options_.data_root;
  data.max_bytes = static_cast<uint64_t>(options_.max_data_file_mb) << 20;
  SetDataFilePolicy(data);
  ASSIGN_OR_RETURN(experiment_store_, ExperimentStore::Open(options_.experiment_dir));
  progress_hub_ = std::make_unique<ProgressHub>();
  RunnerOptions runner;
  runner.workers = options_.experiment_workers;
  runner.device = options_.device;
  runner.cpu_threads = options_.threads;
  runner.python = options_.report_python;
  runner.plot_script = options_.plot_script.empty() ? DefaultPlotScript() : options_.plot_script;
  runner.max_resume_attempts = options_.max_resume_attempts;
  RETURN_IF_ERROR(StartArmExecutor());
  runner.arm_executor = k8s_arm_executor_.get();
  runner.run_sweep = seams_.run_sweep;
  runner.before_register = seams_.before_register;
  runner.on_start = seams_.on_start;
  experiment_runner_ = std::make_unique<ExperimentRunner>(
      experiment_store_.get(), progress_hub_.get(), metrics_.get(), runner);
  ExperimentLimits limits;
  limits.max_config_bytes = options_.max_config_bytes;
  limits.arms_elsewhere = k8s_arm_executor_ != nullptr;  // arms train in pods
  limits.memory_bytes = options_.experiment_memory_mb > 0 ? options_.experiment_memory_mb << 20
                                                          : DefaultExperimentMemoryBytes();
  experiments_core_ = std::make_unique<ExperimentsCore>(
      experiment_store_.get(), experiment_runner_.get(), progress_hub_.get(), limits);
  experiments_core_->set_model_control(model_control_.get());  // PromoteArm
  LogInfo(absl::StrCat("experiments in ", options_.experiment_dir, " (SQLite journal ",
                       experiment_store_->journal_mode(), ", plots ",
                       runner.python.empty()        ? "off: no --report-python; reports have no plots"
                       : runner.plot_script.empty() ? "off: no plot script; reports have no plots"
                                                    : runner.plot_script,
                       "; CSV data ",
                       options_.data_root.empty() ? "off: no --data-root"
                                                  : absl::StrCat("under ", options_.data_root),
                       "; a sweep may need up to ", limits.memory_bytes >> 20, " MiB)"));
  return absl::OkStatus();
}

absl::Status FlashtickServer::StartGrpc() {
  inference_service_ = std::make_unique<InferenceService>(core_.get(), queue_.get(), metrics_.get(),
                                                          &ready_, model_control_.get());
  StreamLimits limits;
  limits.max_streams = options_.max_streams;
  limits.max_streams_per_client = options_.max_streams_per_client;
  limits.idle_timeout = absl::Seconds(options_.stream_idle_timeout_seconds);
  limits.memory_bytes = options_.stream_memory_mb << 20;
  stream_admission_ = std::make_unique<StreamAdmission>(limits, metrics_.get());
  DecodeOptions decode;
  decode.capture = options_.decode_graphs;
  tick_stream_service_ = std::make_unique<TickStreamService>(core_.get(), queue_.get(),
                                                             metrics_.get(), stream_admission_.get(),
                                                             client_namer_.get(), decode);
  experiments_service_ =
      std::make_unique<ExperimentsService>(experiments_core_.get(), metrics_.get(),
                                           client_namer_.get(), options_.max_experiments_per_client,
                                           options_.operator_clients);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.listen, credentials_, &grpc_port_);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options_.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(options_.max_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             Millis(options_.handshake_timeout_seconds));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             Millis(options_.max_connection_idle_seconds));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             Millis(options_.keepalive_min_interval_seconds));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  builder.RegisterService(inference_service_.get());
  builder.RegisterService(tick_stream_service_.get());
  builder.RegisterService(experiments_service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || grpc_port_ == 0) {
    return absl::UnavailableError(absl::StrCat("gRPC cannot listen on ", options_.listen,
                                               " (address in use or not local? try --listen",
                                               options_.tls_cert.empty()
                                                   ? ")"
                                                   : "; or --tls-cert/--tls-key do not match)"));
  }
  // The connection cap, on the listener gRPC just opened (connection_gate.h):
  // gRPC 1.51 has no cap of its own and stops listening at EMFILE.
  const int cap = EffectiveMaxConnections(options_.max_connections, OpenFileLimit());
  Metrics* metrics = metrics_.get();
  auto gate = ConnectionGate::Install(grpc_port_, cap, [metrics](const std::string& reason) {
    metrics->RecordConnectionRefused(reason);
  });
  if (gate.ok()) {
    connection_gate_ = std::move(*gate);
    LogInfo(cap > 0 ? absl::StrCat("at most ", cap, " connections on the gRPC port",
                                   cap < options_.max_connections
                                       ? " (--max-connections lowered to fit the open-file limit)"
                                       : "")
                    : "no cap on gRPC connections (--max-connections 0)");
  } else {
    LogWarning(absl::StrCat("--max-connections not applied: ", gate.status().message()));
  }
  auto* health = server_->GetHealthCheckService();
  health->SetServingStatus(true);
  for (const char* service : kHealthServices) health->SetServingStatus(service, true);
  return absl::OkStatus();
}

void FlashtickServer::Shutdown() {
  std::lock_guard<std::mutex> lock(shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  ready_.store(false);
  if (server_ != nullptr) {
    server_->GetHealthCheckService()->SetServingStatus(false);
    connection_gate_.reset();  // before gRPC closes the listener and its number is reused
    const auto deadline =
        std::chrono::system_clock::now() +
        std::chrono::milliseconds(static_cast<int64_t>(options_.shutdown_grace_seconds * 1000));
    // Stops new RPCs; waits for in-flight ones (their jobs still run on the
    // queue) until the deadline, then cancels the rest.
    server_->Shutdown(deadline);
  }
  // Running sweeps stop between steps and stay RUNNING, to resume on restart.
  if (experiment_runner_ != nullptr) experiment_runner_->Shutdown();
  if (queue_ != nullptr) queue_->Shutdown();
  if (server_ != nullptr) server_->Wait();
}

FlashtickServer::~FlashtickServer() { Shutdown(); }

}  // namespace flashtick
