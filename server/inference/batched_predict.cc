// Stacking, right padding and slicing of a request batch (see batched_predict.h).
// When every request wants only its last step and all have the same length, the
// forward itself runs last_only (the head on one row per sequence); otherwise it
// returns every row and the last rows are sliced here.
#include "server/inference/batched_predict.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

int LengthBucket(int64_t steps) {
  if (steps <= 1) return 0;
  // floor(4·log2(n)); the +1e-9 keeps exact powers of two (log2 rounding) in their bucket.
  return static_cast<int>(std::floor(4.0 * std::log2(static_cast<double>(steps)) + 1e-9));
}

absl::StatusOr<std::vector<std::vector<float>>> PredictBatched(
    Transformer* model, absl::Span<const BatchedRequest> requests,
    const std::function<bool()>& abandoned, int64_t chunk_tokens) {
  if (requests.empty()) return std::vector<std::vector<float>>{};
  const int64_t F = model->config().features;
  const int64_t classes = model->config().classes;
  int64_t rows = 0, T = 0;
  bool all_last = true, same_length = true;
  for (const BatchedRequest& r : requests) {
    if (r.batch < 1 || r.steps < 1 || static_cast<int64_t>(r.ticks.size()) != r.batch * r.steps * F) {
      return absl::InternalError(absl::StrCat("batched request of shape [", r.batch, ", ", r.steps,
                                              ", ", F, "] has ", r.ticks.size(),
                                              " values; this is a bug"));
    }
    rows += r.batch;
    same_length = same_length && r.steps == requests.front().steps;
    T = std::max(T, r.steps);
    all_last = all_last && r.last_only;
  }
  const bool forward_last_only = all_last && same_length;

  // [rows, T, F], each sequence's steps first, zeros after (right padding).
  std::vector<float> stacked;
  if (requests.size() > 1) {
    stacked.assign(static_cast<size_t>(rows * T * F), 0.0f);
    int64_t row = 0;
    for (const BatchedRequest& r : requests) {
      for (int64_t b = 0; b < r.batch; ++b, ++row) {
        std::memcpy(stacked.data() + row * T * F, r.ticks.data() + b * r.steps * F,
                    static_cast<size_t>(r.steps * F) * sizeof(float));
      }
    }
  }
  absl::Span<const float> input = requests.size() > 1 ? absl::MakeConstSpan(stacked)
                                                      : requests.front().ticks;
  const int64_t out_T = forward_last_only ? 1 : T;
  // Chunks of whole rows: a long batch stops at the next boundary once every
  // client is gone (cancelled or past its deadline) instead of holding the worker.
  const int64_t chunk_rows = std::max<int64_t>(1, chunk_tokens / T);
  std::vector<float> probs;
  // Inside each forward the model asks again between layers: one long row, which
  // no row split shortens, stops there (model/transformer.h).
  const auto predict = [&](absl::Span<const float> part,
                           int64_t n) -> absl::StatusOr<std::vector<float>> {
    auto result = model->Predict(part, n, T, forward_last_only, abandoned);
    if (result.status().code() == absl::StatusCode::kCancelled) {
      return absl::CancelledError(absl::StrCat(
          "every client of this request has gone (cancelled or past its deadline); ",
          result.status().message()));
    }
    return result;
  };
  if (chunk_rows >= rows) {
    ASSIGN_OR_RETURN(probs, predict(input, rows));
  } else {
    probs.reserve(static_cast<size_t>(rows * out_T * classes));
    for (int64_t row0 = 0; row0 < rows; row0 += chunk_rows) {
      if (row0 > 0 && abandoned && abandoned()) {
        return absl::CancelledError(absl::StrCat(
            "every client of this request has gone (cancelled or past its deadline); the "
            "forward stopped after ", row0, " of ", rows, " rows"));
      }
      const int64_t n = std::min(chunk_rows, rows - row0);
      ASSIGN_OR_RETURN(std::vector<float> part,
                       predict(input.subspan(static_cast<size_t>(row0 * T * F),
                                             static_cast<size_t>(n * T * F)),
                               n));
      probs.insert(probs.end(), part.begin(), part.end());
    }
  }
  if (static_cast<int64_t>(probs.size()) != rows * out_T * classes) {
    return absl::InternalError(absl::StrCat("the model returned ", probs.size(),
                                            " probabilities for a batch of ", rows, " × ", out_T,
                                            " × ", classes, "; this is a bug"));
  }
  if (requests.size() == 1) {  // the forward's output is already the answer
    return std::vector<std::vector<float>>{std::move(probs)};
  }

  std::vector<std::vector<float>> out;
  out.reserve(requests.size());
  int64_t row = 0;
  for (const BatchedRequest& r : requests) {
    const int64_t keep = r.last_only ? 1 : r.steps;  // output steps of this request
    const int64_t first = forward_last_only ? 0 : (r.last_only ? r.steps - 1 : 0);
    std::vector<float> mine(static_cast<size_t>(r.batch * keep * classes));
    for (int64_t b = 0; b < r.batch; ++b, ++row) {
      std::memcpy(mine.data() + b * keep * classes,
                  probs.data() + (row * out_T + first) * classes,
                  static_cast<size_t>(keep * classes) * sizeof(float));
    }
    out.push_back(std::move(mine));
  }
  return out;
}

}  // namespace flashtick
