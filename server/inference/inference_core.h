// InferenceCore: the logic behind inference.GRPCInferenceService, free of gRPC
// server types so handlers stay thin (parse -> core -> status -> Finish) and the
// tick stream reuses it. Prepare looks the model up and validates the request
// (cheap, on the RPC thread); Run predicts and fills the response (on a worker).
// ModelInfer output: `probs` FP32 [B, N, classes], or [B, 1, classes] when the
// request parameter last_only is true, plus response parameters kernel_path,
// device and compute_seconds, so every answer says which kernel path ran.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "inference/grpc_service.pb.h"
#include "kernels/host_staging_pool.h"
#include "server/model_repository.h"
#include "server/request_validation.h"

namespace flashtick {

class InferenceCore {
 public:
  // A request that passed lookup and validation, ready to run.
  struct Prepared {
    // Shared: the version stays loaded for this request even if it is unloaded or
    // replaced while the request waits or runs.
    ModelEntryPtr model;
    ValidatedInfer input;
    std::string id;  // echoed back, as the spec asks
  };

  // `repository` is not owned; it may change under the core (RepositoryModelLoad). max_seq_len: the server-wide --max-seq-len.
  // max_request_rows: largest B·N per ModelInfer (0: no cap). pad_length_to: forwards
  // run at a multiple of this length (batched_predict.h, PaddedLength; 1: as asked).
  // staging (may be null, not owned): page-locked host buffers a merged batch is
  // stacked into (batched_predict.h, PredictBatchedInto).
  InferenceCore(const ModelRepository* repository, int64_t max_seq_len,
                int64_t max_request_rows = 0, int64_t pad_length_to = 1,
                HostStagingPool* staging = nullptr);

  // Moves the request's tensor data into the result (ValidateModelInfer): the
  // request keeps only its metadata.
  absl::StatusOr<Prepared> Prepare(inference::ModelInferRequest* request) const;
  // The memory a prepared request holds while it waits in the queue: its tensor
  // (once: it was moved out of the request) plus what is left of the request.
  static int64_t QueuedBytes(const Prepared& prepared,
                             const inference::ModelInferRequest& request);
  absl::Status Run(const Prepared& prepared, inference::ModelInferResponse* response) const;
  // Runs requests for the SAME model as one forward (server/inference/batched_predict.h)
  // and fills responses[i] for batch[i]. One status for all: they share the forward.
  // What one forward cost: its wall time, and the peak of the memory it allocated
  // itself on the backend (forward_window.h; see Metrics::RecordRequestPeakMemory).
  struct BatchCost {
    double compute_seconds = 0;
    int64_t peak_memory_bytes = 0;
  };
  // `cost` (may be null) receives what the forward cost.
  // `abandoned` (may be empty): asked between chunks of a long forward
  // (batched_predict.h); true stops it with CANCELLED.
  absl::Status RunBatch(absl::Span<const Prepared* const> batch,
                        absl::Span<inference::ModelInferResponse* const> responses,
                        BatchCost* cost, const std::function<bool()>& abandoned = {}) const;

  absl::StatusOr<inference::ModelMetadataResponse> ModelMetadata(
      const inference::ModelMetadataRequest& request) const;
  inference::ServerMetadataResponse ServerMetadata() const;
  // False for unknown models and versions (the spec answers readiness, not errors).
  bool ModelReady(const inference::ModelReadyRequest& request) const;
  // Triton's repository index: every loaded version, state READY, or UNAVAILABLE
  // with the reason for a version refused at load. Unloaded models are not listed.
  inference::RepositoryIndexResponse RepositoryIndex() const;

  // The largest N this server accepts for `model`.
  int64_t MaxSteps(const ModelEntry& model) const;
  // The lengths a ModelInfer forward of `model` can run at under pad_length_to: each
  // multiple of it up to PaddedLength(MaxSteps). Empty when pad_length_to is 1 (every
  // length is possible).
  std::vector<int64_t> ForwardLengths(const ModelEntry& model) const;
  // flashtickd --warm-up: forwards of zeros at each of ForwardLengths, at every row
  // count B from 1 to the most one forward chunk of that length holds
  // (batched_predict.h, kChunkTokens / L) or `max_rows`, whichever is less: the shapes
  // a batch of up to max_rows one-row requests runs as. So a backend's first-call costs
  // (the attention dispatcher's timing, a cuDNN graph per (B, T): docs/kernels/cudnn.md,
  // "New lengths") are paid before the server says SERVING, not by a client's request.
  // Each shape runs twice, as a forward of every step and as a last-step forward.
  // Returns how many forwards ran.
  absl::StatusOr<int64_t> WarmUp(const ModelEntry& model, int64_t max_rows = 1) const;
  // The `model` metric label of a request: the name when it is served, else "".
  std::string ModelLabel(absl::string_view name) const;
  const ModelRepository& repository() const { return *repository_; }

 private:
  // Fills one response's metadata and sizes its output (raw_output_contents[0]
  // or fp32_contents, as the request sent its input); returns that buffer, which
  // the forward fills. compute_* parameters are set after the forward.
  absl::StatusOr<absl::Span<float>> PrepareResponse(
      const Prepared& prepared, inference::ModelInferResponse* response) const;

  const ModelRepository* repository_;
  int64_t max_seq_len_;
  int64_t max_request_rows_;
  int64_t pad_length_to_;
  HostStagingPool* staging_;
};

}  // namespace flashtick
