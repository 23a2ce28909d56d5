// FlashtickServer: flashtickd assembled. Start() creates the backend, loads the
// model repository, starts the Prometheus exposer, then the gRPC server with
// GRPCInferenceService (KServe v2), flashtick.v1.TickStream,
// flashtick.v1.Experiments, grpc.health.v1.Health and server reflection. Ready
// (ServerReady, health SERVING) only once everything listens. Shutdown() flips
// health to NOT_SERVING, stops accepting RPCs, lets in-flight ones finish within
// the grace period and drains the inference queue.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/grpcpp.h>
#include <prometheus/exposer.h>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/host_staging_pool.h"
#include "server/client_identity.h"
#include "server/connection_gate.h"
#include "server/experiments/experiment_runner.h"
#include "server/experiments/experiment_store.h"
#include "server/experiments/experiments_core.h"
#include "server/experiments/experiments_service.h"
#include "server/experiments/k8s_arm_executor.h"
#include "server/experiments/k8s_client.h"
#include "server/experiments/progress_hub.h"
#include "server/inference/inference_core.h"
#include "server/inference/inference_service.h"
#include "server/metrics/backend_memory_collector.h"
#include "server/metrics/metrics.h"
#include "server/metrics/process_collector.h"
#include "server/model_repository.h"
#include "server/server_options.h"
#include "server/stream/tick_stream_service.h"
#include "server/work_queue.h"

namespace flashtick {

class FlashtickServer {
 public:
  static absl::StatusOr<std::unique_ptr<FlashtickServer>> Start(const ServerOptions& options);
  // Test seams of the experiment runner (RunnerOptions): the sweep replaced (empty:
  // SweepEngine::Run), a call when the runner starts, and one between a worker's
  // pop and its running list.
  struct ExperimentSeams {
    decltype(RunnerOptions::run_sweep) run_sweep;
    decltype(RunnerOptions::on_start) on_start;
    decltype(RunnerOptions::before_register) before_register;
  };
  static absl::StatusOr<std::unique_ptr<FlashtickServer>> Start(const ServerOptions& options,
                                                               ExperimentSeams seams);
  ~FlashtickServer();

  // Idempotent and thread-safe.
  void Shutdown();

  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }  // -1 when disabled
  // Changes at run time (RepositoryModelLoad / Unload); lookups are thread-safe.
  const ModelRepository& repository() const { return *repository_; }
  // The gRPC port's connection cap; null when not installed (e.g. a unix socket).
  ConnectionGate* connection_gate() const { return connection_gate_.get(); }

 private:
  explicit FlashtickServer(ServerOptions options) : options_(std::move(options)) {}
  absl::Status StartMetrics();
  // --warm-up: InferenceCore::WarmUp of every served model at startup, and of every
  // version RepositoryModelLoad or a sweep promotion loads later (before it serves:
  // ModelRepository::set_prepare), each timed in the log. A model whose warm-up fails
  // is logged and still served (it answers as it would have).
  void WarmUpModels();
  void WarmUpModel(const ModelEntry& entry);
  absl::Status StartGrpc();
  absl::Status StartExperiments();
  absl::Status StartArmExecutor();

  ServerOptions options_;
  ExperimentSeams seams_;  // empty: the real sweep engine
  std::unique_ptr<Backend> backend_;
  // Merged batches' host staging (--max-pinned-staging-mb; null when 0). Declared after
  // the backend it allocates from and before the core that uses it.
  std::unique_ptr<HostStagingPool> staging_;
  std::unique_ptr<ModelRepository> repository_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  // Read at scrape time beside the registry (the Exposer holds weak pointers).
  std::shared_ptr<ProcessCollector> process_collector_;
  std::shared_ptr<BackendMemoryCollector> memory_collector_;
  std::unique_ptr<WorkQueue> queue_;
  std::unique_ptr<InferenceCore> core_;
  std::unique_ptr<ModelControl> model_control_;  // RepositoryModelLoad / Unload
  std::unique_ptr<InferenceService> inference_service_;
  std::unique_ptr<ClientNamer> client_namer_;  // names callers for per-client limits
  std::unique_ptr<StreamAdmission> stream_admission_;  // outlives the streams' reactors
  std::unique_ptr<TickStreamService> tick_stream_service_;
  std::unique_ptr<ExperimentStore> experiment_store_;
  std::unique_ptr<ProgressHub> progress_hub_;
  std::unique_ptr<K8sClient> k8s_client_;             // --sweep-arm-runner=kubernetes
  std::unique_ptr<K8sArmExecutor> k8s_arm_executor_;  // before the runner that uses it
  std::unique_ptr<ExperimentRunner> experiment_runner_;
  std::unique_ptr<ExperimentsCore> experiments_core_;
  std::unique_ptr<ExperimentsService> experiments_service_;
  std::shared_ptr<grpc::ServerCredentials> credentials_;  // plaintext/TLS (+ token check)
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<ConnectionGate> connection_gate_;  // --max-connections on server_'s port
  std::atomic<bool> ready_{false};
  std::mutex shutdown_mu_;
  bool shut_down_ = false;
  int grpc_port_ = 0;
  int metrics_port_ = -1;
};

}  // namespace flashtick
