// Stacking, right padding and slicing of a request batch (see batched_predict.h).
// When every request wants only its last step and all have the same length, the
// forward itself runs last_only (the head on one row per sequence); otherwise it
// returns every row and the last rows are sliced here.
#include "server/inference/batched_predict.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

int LengthBucket(int64_t steps) {
  if (steps <= 1) return 0;
  // floor(4·log2(n)); the +1e-9 keeps exact powers of two (log2 rounding) in their bucket.
  return static_cast<int>(std::floor(4.0 * std::log2(static_cast<double>(steps)) + 1e-9));
}

int64_t PaddedLength(int64_t steps, int64_t pad_length_to, int64_t max_context) {
  if (pad_length_to <= 1 || steps % pad_length_to == 0) return steps;
  const int64_t up = (steps / pad_length_to + 1) * pad_length_to;
  return std::max(steps, std::min(up, max_context));
}

namespace {

// Host floats for a merged batch: a buffer of the staging pool when it has room, else
// ordinary memory. Either way data() holds `count` floats.
class BatchBuffer {
 public:
  BatchBuffer(HostStagingPool* pool, size_t count) {
    if (pool != nullptr) {
      absl::StatusOr<HostStagingPool::Lease> lease = pool->Acquire(count * sizeof(float));
      if (lease.ok()) {
        lease_ = *std::move(lease);
        data_ = static_cast<float*>(lease_.data());
        return;
      }
    }
    fallback_.resize(count);
    data_ = fallback_.data();
  }
  float* data() const { return data_; }

 private:
  HostStagingPool::Lease lease_;
  std::vector<float> fallback_;
  float* data_ = nullptr;
};

}  // namespace

absl::Status PredictBatchedInto(Transformer* model, absl::Span<const BatchedRequest> requests,
                                absl::Span<const absl::Span<float>> outputs,
                                const std::function<bool()>& abandoned, int64_t chunk_tokens,
                                int64_t pad_length_to, HostStagingPool* staging) {
  if (requests.empty()) return absl::OkStatus();
  const int64_t F = model->config().features;
  const int64_t classes = model->config().classes;
  if (outputs.size() != requests.size()) {
    return absl::InternalError(absl::StrCat("PredictBatched got ", requests.size(),
                                            " requests and ", outputs.size(),
                                            " outputs; this is a bug"));
  }
  int64_t rows = 0, T = 0;
  bool all_last = true, same_length = true;
  for (size_t i = 0; i < requests.size(); ++i) {
    const BatchedRequest& r = requests[i];
    if (r.batch < 1 || r.steps < 1 || static_cast<int64_t>(r.ticks.size()) != r.batch * r.steps * F) {
      return absl::InternalError(absl::StrCat("batched request of shape [", r.batch, ", ", r.steps,
                                              ", ", F, "] has ", r.ticks.size(),
                                              " values; this is a bug"));
    }
    const int64_t keep = r.last_only ? 1 : r.steps;
    if (static_cast<int64_t>(outputs[i].size()) != r.batch * keep * classes) {
      return absl::InternalError(absl::StrCat("the output of batched request ", i, " has room for ",
                                              outputs[i].size(), " probabilities, not ",
                                              r.batch * keep * classes, "; this is a bug"));
    }
    rows += r.batch;
    same_length = same_length && r.steps == requests.front().steps;
    T = std::max(T, r.steps);
    all_last = all_last && r.last_only;
  }
  const int64_t longest = T;
  T = PaddedLength(longest, pad_length_to, model->config().max_context);
  const bool padded = T != longest;
  // Last-step requests of one length run the last-step forward, padded or not: its
  // answer row is then the last real step, steps − 1 (Transformer::PredictInto's
  // valid_steps). Mixed lengths or full-sequence requests take rows of a full forward.
  const bool forward_last_only = all_last && same_length;
  const int64_t valid_steps = forward_last_only && padded ? longest : 0;
  // One unpadded request runs from the request's own buffer, and one request whose
  // output is the forward's whole output is written straight into the response.
  const bool single = requests.size() == 1 && !padded;
  const bool single_output = requests.size() == 1 && (!padded || forward_last_only);

  // [rows, T, F], each sequence's steps first, zeros after (right padding). A
  // single unpadded request is forwarded from its own buffer (the request's bytes).
  const size_t stacked_count = single ? 0 : static_cast<size_t>(rows * T * F);
  const BatchBuffer stacked(single ? nullptr : staging, stacked_count);
  if (!single) {
    int64_t row = 0;
    for (const BatchedRequest& r : requests) {
      for (int64_t b = 0; b < r.batch; ++b, ++row) {
        float* dst = stacked.data() + row * T * F;
        std::memcpy(dst, r.ticks.data() + b * r.steps * F,
                    static_cast<size_t>(r.steps * F) * sizeof(float));
        std::memset(dst + r.steps * F, 0, static_cast<size_t>((T - r.steps) * F) * sizeof(float));
      }
    }
  }
  const absl::Span<const float> input =
      single ? requests.front().ticks : absl::MakeConstSpan(stacked.data(), stacked_count);
  const int64_t out_T = forward_last_only ? 1 : T;
  // A single request's forward writes straight into its output (the response's
  // buffer); a batch's goes to one buffer that is sliced below.
  const size_t batch_probs_count = single_output ? 0 : static_cast<size_t>(rows * out_T * classes);
  const BatchBuffer batch_probs(single_output ? nullptr : staging, batch_probs_count);
  const absl::Span<float> probs =
      single_output ? outputs.front() : absl::MakeSpan(batch_probs.data(), batch_probs_count);
  // Chunks of whole rows: a long batch stops at the next boundary once every
  // client is gone (cancelled or past its deadline) instead of holding the worker.
  const int64_t chunk_rows = std::max<int64_t>(1, chunk_tokens / T);
  // Inside each forward the model asks again between layers: one long row, which
  // no row split shortens, stops there (model/transformer.h).
  for (int64_t row0 = 0; row0 < rows; row0 += chunk_rows) {
    if (row0 > 0 && abandoned && abandoned()) {
      return absl::CancelledError(absl::StrCat(
          "every client of this request has gone (cancelled or past its deadline); the "
          "forward stopped after ", row0, " of ", rows, " rows"));
    }
    const int64_t n = std::min(chunk_rows, rows - row0);
    const absl::Status status = model->PredictInto(
        input.subspan(static_cast<size_t>(row0 * T * F), static_cast<size_t>(n * T * F)), n, T,
        forward_last_only, abandoned,
        probs.subspan(static_cast<size_t>(row0 * out_T * classes),
                      static_cast<size_t>(n * out_T * classes)),
        valid_steps);
    if (status.code() == absl::StatusCode::kCancelled) {
      return absl::CancelledError(absl::StrCat(
          "every client of this request has gone (cancelled or past its deadline); ",
          status.message()));
    }
    RETURN_IF_ERROR(status);
  }
  if (single_output) return absl::OkStatus();  // the forward's output is already the answer

  int64_t row = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const BatchedRequest& r = requests[i];
    const int64_t keep = r.last_only ? 1 : r.steps;  // output steps of this request
    const int64_t first = forward_last_only ? 0 : (r.last_only ? r.steps - 1 : 0);
    for (int64_t b = 0; b < r.batch; ++b, ++row) {
      std::memcpy(outputs[i].data() + b * keep * classes,
                  probs.data() + (row * out_T + first) * classes,
                  static_cast<size_t>(keep * classes) * sizeof(float));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<float>>> PredictBatched(
    Transformer* model, absl::Span<const BatchedRequest> requests,
    const std::function<bool()>& abandoned, int64_t chunk_tokens, int64_t pad_length_to) {
  const int64_t F = model->config().features;
  const int64_t classes = model->config().classes;
  std::vector<std::vector<float>> out(requests.size());
  std::vector<absl::Span<float>> spans;
  spans.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const BatchedRequest& r = requests[i];
    // A malformed request gets no room; PredictBatchedInto names its shape.
    if (r.batch >= 1 && r.steps >= 1 &&
        static_cast<int64_t>(r.ticks.size()) == r.batch * r.steps * F) {
      out[i].resize(static_cast<size_t>(r.batch * (r.last_only ? 1 : r.steps) * classes));
    }
    spans.push_back(absl::MakeSpan(out[i]));
  }
  RETURN_IF_ERROR(PredictBatchedInto(model, requests, spans, abandoned, chunk_tokens, pad_length_to));
  return out;
}

}  // namespace flashtick
