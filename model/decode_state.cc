// DecodeState: allocation and growth of the per-layer K/V caches of one sequence
// (see model/decode_state.h for the layout and why the cache grows by doubling).
// Growth copies the valid prefix [0, steps) of each cache into the new buffer with
// one Backend::Copy per tensor: the cache is [1, capacity, Hkv, D] row-major, so the
// first `steps` rows are one contiguous block.
#include "model/decode_state.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/attention.h"
#include "model/transformer_impl.h"

namespace flashtick {

DecodeState::DecodeState(const Transformer* model, DType act) : model_(model), act_(act) {}

DecodeState::~DecodeState() = default;

absl::StatusOr<std::unique_ptr<DecodeState>> DecodeState::Create(const Transformer& model,
                                                                  int64_t initial_capacity,
                                                                  const DecodeOptions& options) {
  if (initial_capacity < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("decode state: initial_capacity must be >= 1, got ", initial_capacity));
  const ModelConfig& c = model.config();
  Backend* be = model.backend();
  std::unique_ptr<DecodeState> s(new DecodeState(&model, model.compute_dtype()));
  // The one-row scratch: the same buffers the full forward carves, at Bc = T = 1.
  const ForwardWorkspace sizing =
      ForwardWorkspace::Carve(nullptr, be->device(), c, s->act_, 1, 1, /*last_only=*/false);
  ASSIGN_OR_RETURN(s->scratch_mem_, be->Allocate(sizing.bytes));
  s->scratch_ = std::make_unique<ForwardWorkspace>(ForwardWorkspace::Carve(
      s->scratch_mem_.get(), be->device(), c, s->act_, 1, 1, /*last_only=*/false));
  // One host staging block for the step's two transfers, so a tick allocates nothing
  // and its copies need no wait of their own (Transformer::Step synchronises once).
  // The row and the step's positions go up together: the device block io_mem_ mirrors
  // the first upload_bytes() of the staging, and the scratch's in32 is moved into it.
  const size_t in_bytes = s->scratch_->in32.bytes();
  s->positions_offset_ = (in_bytes + 15) / 16 * 16;
  s->probs_offset_ = (s->upload_bytes() + 63) / 64 * 64;
  ASSIGN_OR_RETURN(s->staging_mem_,
                   be->AllocateHostStaging(s->probs_offset_ + s->scratch_->probs32.bytes()));
  ASSIGN_OR_RETURN(s->io_mem_, be->Allocate(s->upload_bytes()));
  if (s->scratch_->in.data == s->scratch_->in32.data) s->scratch_->in.data = s->io_mem_.get();
  s->scratch_->in32.data = s->io_mem_.get();  // in fp32, `in` is in32 itself (moved too)
  s->capture_ = options.capture && be->SupportsCapture();
  s->layers_.resize(c.layers);
  RETURN_IF_ERROR(s->Reserve(std::min<int64_t>(initial_capacity, MaxRows(c))));
  return s;
}

int64_t DecodeState::CacheBytes(const Transformer& model, int64_t rows) {
  const ModelConfig& c = model.config();
  const int64_t r = std::min<int64_t>(rows, MaxRows(c));
  const int64_t caches = int64_t{2} * c.layers * r * c.kv_heads * c.head_dim() *
                         static_cast<int64_t>(DTypeSize(model.compute_dtype()));
  // The decode kernel's partial results: one buffer, sized and grown with the caches.
  const int64_t work = AttentionDecodeWorkFloats(1, c.heads, r, c.head_dim()) *
                       static_cast<int64_t>(sizeof(float));
  return caches + work;
}

int64_t DecodeState::CapacityFor(const Transformer& model, int64_t rows,
                                 int64_t initial_capacity) {
  const int64_t max_rows = MaxRows(model.config());
  int64_t capacity = std::min<int64_t>(std::max<int64_t>(initial_capacity, 1), max_rows);
  // Steps reserve one row at a time, so each growth is Reserve's max(capacity + 1,
  // 2·capacity) = 2·capacity, capped.
  while (capacity < rows && capacity < max_rows)
    capacity = std::min<int64_t>(capacity * 2, max_rows);
  return capacity;
}

absl::Status DecodeState::Reserve(int64_t rows) {
  const ModelConfig& c = model_->config();
  const int64_t sink = SinkRows(c);
  if (rows > MaxRows(c))
    return absl::ResourceExhaustedError(absl::StrCat(
        "decode state: ", rows - sink, " steps exceed the model's max_context of ", c.max_context,
        "; start a new session (a new DecodeState) for the next sequence"));
  if (rows <= capacity_) return absl::OkStatus();
  const int64_t new_capacity =
      std::min<int64_t>(std::max<int64_t>(rows, capacity_ * 2), MaxRows(c));
  Backend* be = model_->backend();
  const DeviceKind dev = be->device();
  const int64_t Hkv = c.kv_heads, D = c.head_dim();
  const size_t bytes = static_cast<size_t>(new_capacity * Hkv * D) * DTypeSize(act_);
  // Allocate everything first: a failed allocation must leave the old caches intact.
  std::vector<LayerCache> grown(layers_.size());
  for (LayerCache& g : grown) {
    absl::StatusOr<std::shared_ptr<void>> k = be->Allocate(bytes);
    absl::StatusOr<std::shared_ptr<void>> v = k.ok() ? be->Allocate(bytes) : k;
    if (!v.ok())
      return absl::Status(v.status().code(),
                          absl::StrCat("decode state: growing the K/V cache to ", new_capacity,
                                       " rows (", CacheBytes(*model_, new_capacity),
                                       " bytes): ", v.status().message()));
    g.k_mem = std::move(*k);
    g.v_mem = std::move(*v);
    g.k = MakeView(g.k_mem.get(), act_, dev, {1, new_capacity, Hkv, D});
    g.v = MakeView(g.v_mem.get(), act_, dev, {1, new_capacity, Hkv, D});
  }
  const int64_t work_floats = AttentionDecodeWorkFloats(1, c.heads, new_capacity, D);
  absl::StatusOr<std::shared_ptr<void>> work =
      be->Allocate(static_cast<size_t>(work_floats) * sizeof(float));
  if (!work.ok())
    return absl::Status(work.status().code(),
                        absl::StrCat("decode state: attention workspace for ", new_capacity,
                                     " rows: ", work.status().message()));
  // The sink rows of the layers that exclude the step itself: zero, and kept by the
  // copy below (it moves steps + sink rows of every layer; a layer without the sink
  // copies one unwritten row, which nothing reads).
  const size_t row_bytes = static_cast<size_t>(Hkv * D) * DTypeSize(act_);
  if (steps_ == 0) {
    for (size_t l = 0; l < grown.size(); ++l) {
      if (!c.layer_excludes_self(static_cast<int>(l))) continue;
      RETURN_IF_ERROR(be->Zero(grown[l].k.data, row_bytes));
      RETURN_IF_ERROR(be->Zero(grown[l].v.data, row_bytes));
    }
  }
  const size_t valid = static_cast<size_t>(steps_ + sink) * row_bytes;
  if (steps_ > 0) {
    for (size_t l = 0; l < layers_.size(); ++l) {
      RETURN_IF_ERROR(be->Copy(grown[l].k.data, dev, layers_[l].k.data, dev, valid));
      RETURN_IF_ERROR(be->Copy(grown[l].v.data, dev, layers_[l].v.data, dev, valid));
    }
    // The old buffers are freed when `grown` is swapped in; make sure the copies
    // out of them have finished first (device copies may be asynchronous).
    RETURN_IF_ERROR(be->Synchronize());
  }
  layers_.swap(grown);
  work_mem_ = *std::move(work);
  work_ = MakeView(work_mem_.get(), DType::kF32, dev, {work_floats});
  capacity_ = new_capacity;
  return absl::OkStatus();
}

TensorView DecodeState::position_view() const {
  return MakeView(static_cast<char*>(io_mem_.get()) + positions_offset_, DType::kI32,
                  model_->backend()->device(), {1});
}

TensorView DecodeState::kv_length_view() const {
  return MakeView(static_cast<char*>(io_mem_.get()) + positions_offset_ + sizeof(int32_t),
                  DType::kI32, model_->backend()->device(), {1});
}

}  // namespace flashtick
