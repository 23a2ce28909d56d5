// DecodeState: the incremental-decoding state of one sequence for one Transformer:
// per layer the rotated keys K and the values V of every step so far, each
// [1, capacity, Hkv, D] in the model's compute dtype on the model's backend (rows
// [0, steps) valid), plus a one-row activation scratch, attention decode's workspace
// and a host staging block for the step's upload and download. Transformer::Step
// (model/transformer_step.cc) runs one new row against it, so step t costs O(t·C)
// in attention and O(C²) elsewhere instead of a whole-prefix forward.
// A layer that excludes the step itself (ModelConfig::exclude_self_layers) keeps its
// cache one row later: row 0 is the zero sink key and value, row j + 1 holds step j, so
// the decode of step t over rows [0, t] sees the sink and steps 0..t−1, as the full
// forward's shifted attention does (kernels/step_shift.h); such a model's caches hold
// one row more than max_context at most (SinkRows).
// Not thread-safe: one sequence is fed by one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "model/transformer.h"

namespace flashtick {

struct ForwardWorkspace;  // model/transformer_impl.h

struct DecodeOptions {
  // Capture the step's device work once per cache capacity and replay it on every later
  // step (Backend::BeginCapture: a CUDA graph on the GPU), so a tick pays one launch
  // instead of one per kernel. Ignored on a backend without capture; a capture that
  // fails turns it off for the state, which then runs each step op by op
  // (capture_error() says why). docs/serving.md, "Decode graphs".
  bool capture = false;
};

class DecodeState {
 public:
  // Starts with room for min(initial_capacity, MaxRows) rows; the cache then grows by
  // doubling up to MaxRows (max_context, and the sink row of a model that has one). Why
  // doubling and not max_context up front: a server holds one state per open stream,
  // and a full 32,768-row cache of a C=512, 8-layer model is 2·8·32768·512·4 B = 1 GiB
  // in fp32, while most streams stop far earlier; doubling keeps memory ≤ 2× what the
  // session used, and the copies cost O(1) amortised per step.
  static absl::StatusOr<std::unique_ptr<DecodeState>> Create(
      const Transformer& model, int64_t initial_capacity = kDefaultInitialCapacity,
      const DecodeOptions& options = {});

  static constexpr int64_t kDefaultInitialCapacity = 256;
  // Bytes of every layer's K and V caches at a capacity of `rows` (capped at the
  // model's max_context, as Reserve caps it), in the model's compute dtype, plus the
  // attention decode workspace that grows with them: what a state of `model` holds in
  // device memory beyond its fixed one-row scratch once it has grown to that many rows
  // (the tick stream's admission reserves it per session).
  static int64_t CacheBytes(const Transformer& model, int64_t rows);
  // The capacity a state created with `initial_capacity` has once it holds `rows` rows:
  // the first doubling of it that is ≥ rows, capped at max_context (as Reserve grows).
  // What a session that may reach `rows` steps must reserve is CacheBytes at this many
  // rows, not at `rows`: a 23,400-step day ends in a cache of 32,768 rows.
  static int64_t CapacityFor(const Transformer& model, int64_t rows,
                             int64_t initial_capacity = kDefaultInitialCapacity);
  // 1 when some layer keeps the zero sink row ahead of its steps, else 0: the rows a
  // state needs are steps + SinkRows.
  static int64_t SinkRows(const ModelConfig& c) { return c.exclude_self_layers > 0 ? 1 : 0; }
  // The most rows a state of this model holds: max_context steps and the sink row.
  static int64_t MaxRows(const ModelConfig& c) { return c.max_context + SinkRows(c); }
  ~DecodeState();

  const Transformer& model() const { return *model_; }
  // Steps already in the cache; the next Step runs at position steps().
  int64_t steps() const { return steps_; }
  int64_t capacity() const { return capacity_; }
  // Layer l's caches, [1, capacity, Hkv, D]; only the first steps() rows are valid.
  const TensorView& k_cache(int l) const { return layers_[l].k; }
  const TensorView& v_cache(int l) const { return layers_[l].v; }
  // Whether steps replay a capture, and how many captures were made (one per capacity
  // reached: a grown cache moves, so the step is captured again).
  bool capturing() const { return capture_; }
  int captures() const { return captures_; }
  // OK, or why capture was turned off for this state.
  const absl::Status& capture_error() const { return capture_error_; }

 private:
  friend class Transformer;  // Transformer::Step writes rows and advances the step
  struct LayerCache {
    std::shared_ptr<void> k_mem, v_mem;
    TensorView k, v;
  };

  DecodeState(const Transformer* model, DType act);
  // Makes room for `rows` rows (rows ≤ max_context). Allocates every new buffer
  // before replacing any, so on failure the state is unchanged.
  absl::Status Reserve(int64_t rows);
  void Advance() { ++steps_; }
  // Attention decode's workspace (kernels/ops/attention.h), sized for the capacity and
  // grown with the caches: one for every layer (they run one after another on the
  // backend's stream), so a step allocates nothing on the device.
  const TensorView& decode_work() const { return work_; }
  // Host staging of a step's transfers (Backend::AllocateHostStaging: pinned on CUDA),
  // allocated once with the state. The upload is one copy of upload_bytes() from
  // row_staging() to the device block the scratch's in32 points at: the input row
  // (in32, encoded columns included), then at positions_offset_ two int32, the step's
  // position t and t + 1. The download is the probabilities (the scratch's probs32).
  void* row_staging() const { return staging_mem_.get(); }
  int32_t* positions_staging() const {
    return reinterpret_cast<int32_t*>(static_cast<char*>(staging_mem_.get()) + positions_offset_);
  }
  float* probs_staging() const {
    return reinterpret_cast<float*>(static_cast<char*>(staging_mem_.get()) + probs_offset_);
  }
  size_t upload_bytes() const { return positions_offset_ + 2 * sizeof(int32_t); }
  void* upload_device() const { return io_mem_.get(); }
  // On the device: int32 [1] holding t (rope's position, kv_cache_write's row) and
  // int32 [1] holding t + 1 (attention decode's kv_length).
  TensorView position_view() const;
  TensorView kv_length_view() const;

  const Transformer* model_;
  DType act_;
  int64_t steps_ = 0;
  int64_t capacity_ = 0;
  std::vector<LayerCache> layers_;
  std::shared_ptr<void> work_mem_;
  TensorView work_;
  std::shared_ptr<void> scratch_mem_;
  std::unique_ptr<ForwardWorkspace> scratch_;  // one row (Bc = 1, T = 1) of the forward's buffers
  std::shared_ptr<void> staging_mem_;  // [in32][t, t+1][probs32] on the host, aligned
  std::shared_ptr<void> io_mem_;       // [in32][t, t+1] on the device
  size_t positions_offset_ = 0;
  size_t probs_offset_ = 0;
  bool capture_ = false;
  int captures_ = 0;
  absl::Status capture_error_;
  std::unique_ptr<CapturedWork> capture_work_;  // valid for capture_capacity_
  int64_t capture_capacity_ = 0;
};

}  // namespace flashtick
