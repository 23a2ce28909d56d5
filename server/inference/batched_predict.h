// PredictBatched: several ModelInfer requests as ONE Transformer forward
// (docs/serving.md). Each request's [B_i, T_i, F] ticks are stacked into a [ΣB_i, T, F]
// batch, T = max T_i, padded on the RIGHT with zeros: the model is causal, so
// row t < T_i attends only to rows ≤ t of its own sequence and the padding
// changes none of its outputs (LayerNorm, matmuls and the head are row-wise).
// Each request gets its rows [0, T_i) back, or its row T_i − 1 when last_only.
// LengthBucket groups lengths whose padding stays under 2^(1/4) − 1 ≈ 19 %.
//
// Copies of a request's tensor bytes (docs/serving.md, "Where a request's bytes
// go"): in — gRPC parse into raw_input_contents(0) (library); moved, not copied,
// into ValidatedInfer (request_validation.cc); a span here; stacked only for a
// merged batch (PredictBatchedInto), into page-locked staging where the server keeps
// some; uploaded by ForwardOps::Embed (Backend::Copy).
// Out — ForwardChunk downloads into the response's own buffer (sized by
// InferenceCore::PrepareResponse); a merged batch's rows are sliced into each
// response here; gRPC serialises the response (library).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/host_staging_pool.h"
#include "model/transformer.h"

namespace flashtick {

struct BatchedRequest {
  absl::Span<const float> ticks;  // [batch, steps, F] row-major
  int64_t batch = 0;
  int64_t steps = 0;
  bool last_only = false;
};

// Quarter-octave bucket of a sequence length: floor(4·log2(steps)). Requests are
// merged only within a bucket, so max/min length < 2^(1/4) inside a batch.
int LengthBucket(int64_t steps);

// Rows of the stacked batch are forwarded in chunks of about this many tokens
// (rows × T): rows are independent, so the answer is the same, and between two
// chunks the worker can notice that every client of the batch has gone.
inline constexpr int64_t kChunkTokens = 65536;

// Rounds a forward's length up to a multiple of `pad_length_to`, never past
// `max_context` (pad_length_to ≤ 1: T itself). Padding on the right changes no output
// row (the header comment), so this only bounds how many distinct lengths a backend
// meets: cuDNN builds a graph per (B, T), ~40 ms each on an H100
// (docs/kernels/cudnn.md, "New lengths"), which a server pays per new length.
int64_t PaddedLength(int64_t steps, int64_t pad_length_to, int64_t max_context);

// One forward over all `requests` (same model). Returns each request's fp32
// probabilities [batch, steps or 1, classes], in order. A failing forward fails
// every request with its status. `abandoned` (may be empty) is asked between
// chunks; true stops the forward with CANCELLED (nobody is waiting for it).
// The same, writing request i's probabilities into outputs[i] (exactly
// batch × (steps or 1) × classes floats; INTERNAL otherwise). The server passes
// the responses' own buffers, so the answer is written where gRPC reads it.
// `pad_length_to` (> 1): the forward runs at PaddedLength of the longest request; a
// padded forward returns every row, so last-step requests are sliced from it.
// `staging` (may be null): where a merged batch is stacked and its probabilities
// land before they are sliced, page-locked on CUDA (kernels/host_staging_pool.h), so
// the upload and the download are single DMAs; when the pool has no room, ordinary
// host memory (the same answer, a slower copy).
absl::Status PredictBatchedInto(Transformer* model, absl::Span<const BatchedRequest> requests,
                                absl::Span<const absl::Span<float>> outputs,
                                const std::function<bool()>& abandoned = {},
                                int64_t chunk_tokens = kChunkTokens, int64_t pad_length_to = 1,
                                HostStagingPool* staging = nullptr);
absl::StatusOr<std::vector<std::vector<float>>> PredictBatched(
    Transformer* model, absl::Span<const BatchedRequest> requests,
    const std::function<bool()>& abandoned = {}, int64_t chunk_tokens = kChunkTokens,
    int64_t pad_length_to = 1);

}  // namespace flashtick
