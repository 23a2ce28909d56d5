// cuDNN's fused scaled-dot-product attention as a second implementation of the
// attention forward and backward (kernels/ops/attention.h), through the graph API of
// the C++ cudnn-frontend (cuDNN developer guide, "Graph API" and "Scaled Dot Product
// Attention"; docs/kernels/cudnn.md).
//
// Contract mapping. Our tensors are [B, T, heads, D] with free B/T/head strides; cuDNN
// describes a tensor by dims and strides in the order [B, heads, T, D], so the same
// memory is passed with the strides permuted (no copy). The forward's softmax
// statistics ("Stats") are the row log-sum-exp in natural log, fp32 [B, H, T, 1],
// which we lay out contiguous as [B, H, T]: exactly our L. Our backward and
// backward-over-backward therefore consume a cuDNN forward unchanged, and cuDNN's
// backward consumes ours. cuDNN's backward does not return Dvec = rowsum(dO∘O) (it
// keeps it in its workspace), so we write it with our own row kernel
// (attention_dvec.cu). GQA: K, V (and dK, dV) have Hkv heads; cuDNN maps query head
// h to K/V head h / (H / Hkv) as we do, and sums dK/dV over a group.
// Causal: our queries and keys share positions 0..T-1, so key j is visible to query i
// iff j ≤ i: cuDNN's top-left-aligned causal mask.
//
// A built graph (operation graph + execution plan) is cached per (device, op, dtype,
// shape, strides, scale, masking, deterministic backward): the first call of a shape builds it (milliseconds
// to a second, heuristics mode A), later calls only execute. The workspace comes from
// the context's stream-ordered scratch.
//
// Without FLASHTICK_WITH_CUDNN (the frontend header or cuDNN was not found at
// configure time) every entry point says so with Unimplemented, and the dispatcher
// runs ours.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cuda/attention/attention_dvec.h"
#include "kernels/cuda/attention/flash_host.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"

#if FLASHTICK_WITH_CUDNN
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cudnn_frontend.h>
#endif

namespace flashtick::cuda {

#if FLASHTICK_WITH_CUDNN
namespace {

namespace fe = cudnn_frontend;

// Tensor uids in the variant pack.
enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

struct CachedGraph {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace = 0;
  absl::Status status;  // a failed build is remembered: cuDNN refuses this shape
  std::mutex exec_mu;   // one execute at a time per plan
};

// Process-wide: cuDNN handles per (device, stream) and built graphs per key.
struct CudnnState {
  std::mutex mu;
  std::map<std::pair<int, cudaStream_t>, cudnnHandle_t> handles;
  std::map<std::string, std::shared_ptr<CachedGraph>> graphs;
};

CudnnState& State() {
  static CudnnState* s = new CudnnState();  // never destroyed: handles outlive statics
  return *s;
}

absl::StatusOr<cudnnHandle_t> Handle(cudaStream_t stream) {
  int dev = 0;
  RETURN_IF_CUDA_ERROR(cudaGetDevice(&dev));
  CudnnState& s = State();
  std::lock_guard<std::mutex> l(s.mu);
  auto it = s.handles.find({dev, stream});
  if (it != s.handles.end()) return it->second;
  cudnnHandle_t h = nullptr;
  cudnnStatus_t st = cudnnCreate(&h);
  if (st != CUDNN_STATUS_SUCCESS)
    return absl::UnavailableError(absl::StrCat("cudnn_sdpa: cudnnCreate failed: ", cudnnGetErrorString(st)));
  st = cudnnSetStream(h, stream);
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(h);
    return absl::UnavailableError(absl::StrCat("cudnn_sdpa: cudnnSetStream failed: ", cudnnGetErrorString(st)));
  }
  s.handles[{dev, stream}] = h;
  return h;
}

absl::Status FeCheck(fe::error_t e, const char* step) {
  if (e.is_good()) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat("cudnn_sdpa: ", step, ": ", e.get_message()));
}

// [B, T, heads, D] view → cuDNN's [B, heads, T, D] dims and strides (same memory).
std::vector<int64_t> Dims(const TensorView& t) { return {t.dim(0), t.dim(2), t.dim(1), t.dim(3)}; }
std::vector<int64_t> Strides(const TensorView& t) { return {t.stride(0), t.stride(2), t.stride(1), 1}; }

fe::graph::Tensor_attributes Attr(const char* name, Uid uid, const TensorView& t) {
  return fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(Dims(t)).set_stride(Strides(t));
}

std::string StridesKey(const TensorView& t) {
  return absl::StrCat(t.stride(0), ",", t.stride(1), ",", t.stride(2));
}

absl::Status CheckFwd(In in, Out out, AttentionShape* s) {
  RETURN_IF_ERROR(CheckAttentionArity(Op::kAttentionFwd, in.size(), out.size()));
  RETURN_IF_ERROR(CheckAttentionArgs(in[0], in[1], in[2], s));
  const DType dt = in[0].dtype;
  RETURN_IF_ERROR(flash::CheckFlashVariant("cudnn_sdpa_fwd", *s, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("O", out[0], s->B, s->T, s->H, s->D, dt));
  RETURN_IF_ERROR(CheckAttentionStats("L", out[1], *s, DType::kF32));
  // cuDNN wants 16-byte aligned rows like our kernels do.
  for (const TensorView* t : {&in[0], &in[1], &in[2], &out[0]}) RETURN_IF_ERROR(flash::CheckFlashLayout("tensor", *t));
  if (out[1].device != DeviceKind::kCuda) return absl::InvalidArgumentError("cudnn_sdpa: L is not on the GPU");
  return absl::OkStatus();
}

absl::Status CheckBwd(In in, Out out, AttentionShape* s) {
  RETURN_IF_ERROR(CheckAttentionArity(Op::kAttentionBwd, in.size(), out.size()));
  RETURN_IF_ERROR(CheckAttentionArgs(in[0], in[1], in[2], s));
  const DType dt = in[0].dtype;
  RETURN_IF_ERROR(flash::CheckFlashVariant("cudnn_sdpa_bwd", *s, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("O", in[3], s->B, s->T, s->H, s->D, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("dO", in[4], s->B, s->T, s->H, s->D, dt));
  RETURN_IF_ERROR(CheckAttentionStats("L", in[5], *s, DType::kF32));
  RETURN_IF_ERROR(CheckAttentionTensor("dQ", out[0], s->B, s->T, s->H, s->D, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("dK", out[1], s->B, s->T, s->Hkv, s->D, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("dV", out[2], s->B, s->T, s->Hkv, s->D, dt));
  RETURN_IF_ERROR(CheckAttentionStats("Dvec", out[3], *s, DType::kF32));
  for (int i = 0; i < 5; ++i) RETURN_IF_ERROR(flash::CheckFlashLayout("input", in[i]));
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(flash::CheckFlashLayout("output", out[i]));
  if (in[5].device != DeviceKind::kCuda || out[3].device != DeviceKind::kCuda)
    return absl::InvalidArgumentError("cudnn_sdpa: L and Dvec must be on the GPU");
  return absl::OkStatus();
}

// The backward under CudaContext::deterministic is another graph (another engine).
bool DeterministicBwd(const OpDesc& desc, const CudaContext& ctx) {
  return desc.op == Op::kAttentionBwd && ctx.deterministic;
}

std::string GraphKey(const OpDesc& desc, In in, Out out, const AttentionShape& s, float scale, bool det) {
  int dev = 0;
  cudaGetDevice(&dev);
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &scale, sizeof(scale));
  std::string key = absl::StrCat("dev", dev, "|", OpName(desc.op), "|", DTypeName(in[0].dtype), "|", s.B, ",",
                                 s.T, ",", s.H, ",", s.Hkv, ",", s.D, "|", desc.attention.causal ? "c" : "f", "|",
                                 scale_bits, det ? "|det" : "");
  const size_t n_in = desc.op == Op::kAttentionFwd ? 3 : 5;
  const size_t n_out = desc.op == Op::kAttentionFwd ? 1 : 3;
  for (size_t i = 0; i < n_in; ++i) absl::StrAppend(&key, "|", StridesKey(in[i]));
  for (size_t i = 0; i < n_out; ++i) absl::StrAppend(&key, "|", StridesKey(out[i]));
  return key;
}

absl::Status BuildGraph(const OpDesc& desc, In in, Out out, const AttentionShape& s, float scale,
                        bool det, cudnnHandle_t handle, CachedGraph* cg) {
  auto g = std::make_shared<fe::graph::Graph>();
  const fe::DataType_t io = in[0].dtype == DType::kBF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
  g->set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
  auto Q = g->tensor(Attr("Q", kQ, in[0]));
  auto K = g->tensor(Attr("K", kK, in[1]));
  auto V = g->tensor(Attr("V", kV, in[2]));
  // L / Stats: fp32 [B, H, T, 1], contiguous [B, H, T].
  const std::vector<int64_t> stats_dim = {s.B, s.H, s.T, 1};
  const std::vector<int64_t> stats_stride = {s.H * s.T, s.T, 1, 1};
  if (desc.op == Op::kAttentionFwd) {
    auto opts = fe::graph::SDPA_attributes().set_name("flashtick_sdpa_fwd").set_generate_stats(true).set_attn_scale(scale);
    if (desc.attention.causal) opts.set_causal_mask(true);  // top-left: key j ≤ query i
    auto [O, Stats] = g->sdpa(Q, K, V, opts);
    O->set_output(true).set_dim(Dims(out[0])).set_stride(Strides(out[0])).set_uid(kO);
    Stats->set_output(true).set_data_type(fe::DataType_t::FLOAT).set_dim(stats_dim).set_stride(stats_stride).set_uid(kStats);
  } else {
    auto O = g->tensor(Attr("O", kO, in[3]));
    auto dO = g->tensor(Attr("dO", kDO, in[4]));
    auto Stats = g->tensor(fe::graph::Tensor_attributes()
                               .set_name("Stats")
                               .set_uid(kStats)
                               .set_dim(stats_dim)
                               .set_stride(stats_stride)
                               .set_data_type(fe::DataType_t::FLOAT));
    auto opts = fe::graph::SDPA_backward_attributes().set_name("flashtick_sdpa_bwd").set_attn_scale(scale);
    if (desc.attention.causal) opts.set_causal_mask(true);
    // Bitwise-repeatable dQ (ordered accumulation instead of atomics); cuDNN refuses the
    // graph where it has no such engine, and the caller says so.
    if (det) opts.set_deterministic_algorithm(true);
    auto [dQ, dK, dV] = g->sdpa_backward(Q, K, V, O, dO, Stats, opts);
    dQ->set_output(true).set_dim(Dims(out[0])).set_stride(Strides(out[0])).set_uid(kDQ);
    dK->set_output(true).set_dim(Dims(out[1])).set_stride(Strides(out[1])).set_uid(kDK);
    dV->set_output(true).set_dim(Dims(out[2])).set_stride(Strides(out[2])).set_uid(kDV);
  }
  RETURN_IF_ERROR(FeCheck(g->validate(), "validate"));
  RETURN_IF_ERROR(FeCheck(g->build_operation_graph(handle), "build_operation_graph"));
  RETURN_IF_ERROR(FeCheck(g->create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans"));
  RETURN_IF_ERROR(FeCheck(g->check_support(handle), "check_support"));
  RETURN_IF_ERROR(FeCheck(g->build_plans(handle), "build_plans"));
  int64_t ws = 0;
  RETURN_IF_ERROR(FeCheck(g->get_workspace_size(ws), "get_workspace_size"));
  cg->graph = std::move(g);
  cg->workspace = ws;
  return absl::OkStatus();
}

// The cached graph for these tensors, built on first use. The build status is cached
// too, so a shape cuDNN refuses costs one attempt per process.
absl::StatusOr<std::shared_ptr<CachedGraph>> GetGraph(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  AttentionShape s;
  RETURN_IF_ERROR(desc.op == Op::kAttentionFwd ? CheckFwd(in, out, &s) : CheckBwd(in, out, &s));
  float scale = 0, scale_log2 = 0;
  RETURN_IF_ERROR(flash::FlashScale(desc.attention, s.D, &scale, &scale_log2));
  ASSIGN_OR_RETURN(cudnnHandle_t handle, Handle(ctx.stream));
  const bool det = DeterministicBwd(desc, ctx);
  const std::string key = GraphKey(desc, in, out, s, scale, det);
  CudnnState& st = State();
  std::shared_ptr<CachedGraph> cg;
  {
    std::lock_guard<std::mutex> l(st.mu);
    auto it = st.graphs.find(key);
    if (it != st.graphs.end()) cg = it->second;
  }
  if (cg) {
    RETURN_IF_ERROR(cg->status);
    return cg;
  }
  cg = std::make_shared<CachedGraph>();
  try {
    cg->status = BuildGraph(desc, in, out, s, scale, det, handle, cg.get());
  } catch (const std::exception& e) {
    cg->status = absl::InternalError(absl::StrCat("cudnn_sdpa: graph build threw: ", e.what()));
  }
  {
    std::lock_guard<std::mutex> l(st.mu);
    st.graphs.emplace(key, cg);  // a racing builder's graph wins; ours is dropped
    cg = st.graphs[key];
  }
  RETURN_IF_ERROR(cg->status);
  return cg;
}

absl::Status Execute(CachedGraph& cg, std::unordered_map<int64_t, void*>& pack, CudaContext& ctx) {
  ASSIGN_OR_RETURN(cudnnHandle_t handle, Handle(ctx.stream));
  std::shared_ptr<void> workspace;
  if (cg.workspace > 0) {
    if (!ctx.scratch)
      return absl::FailedPreconditionError("cudnn_sdpa: needs the context's scratch allocator for its workspace");
    ASSIGN_OR_RETURN(workspace, ctx.scratch(static_cast<size_t>(cg.workspace)));
  }
  std::lock_guard<std::mutex> l(cg.exec_mu);
  try {
    RETURN_IF_ERROR(FeCheck(cg.graph->execute(handle, pack, workspace.get()), "execute"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cudnn_sdpa: execute threw: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace

bool CudnnAttentionBuilt() { return true; }

int64_t CudnnAttentionVersion() { return static_cast<int64_t>(cudnnGetVersion()); }

absl::Status CudnnAttentionPrepare(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  if (desc.op != Op::kAttentionFwd && desc.op != Op::kAttentionBwd)
    return absl::UnimplementedError(absl::StrCat("cudnn_sdpa: no ", OpName(desc.op)));
  return GetGraph(desc, in, out, ctx).status();
}

absl::Status CudnnAttentionFwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  if (desc.op != Op::kAttentionFwd)
    return absl::InvalidArgumentError("cudnn_sdpa: CudnnAttentionFwd needs an attention_fwd desc");
  ASSIGN_OR_RETURN(std::shared_ptr<CachedGraph> cg, GetGraph(desc, in, out, ctx));
  std::unordered_map<int64_t, void*> pack = {{kQ, in[0].data}, {kK, in[1].data}, {kV, in[2].data},
                                             {kO, out[0].data}, {kStats, out[1].data}};
  return Execute(*cg, pack, ctx);
}

absl::Status CudnnAttentionBwd(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  if (desc.op != Op::kAttentionBwd)
    return absl::InvalidArgumentError("cudnn_sdpa: CudnnAttentionBwd needs an attention_bwd desc");
  ASSIGN_OR_RETURN(std::shared_ptr<CachedGraph> cg, GetGraph(desc, in, out, ctx));
  std::unordered_map<int64_t, void*> pack = {{kQ, in[0].data},  {kK, in[1].data},  {kV, in[2].data},
                                             {kO, in[3].data},  {kDO, in[4].data}, {kStats, in[5].data},
                                             {kDQ, out[0].data}, {kDK, out[1].data}, {kDV, out[2].data}};
  RETURN_IF_ERROR(Execute(*cg, pack, ctx));
  // Dvec for the backward-over-backward (our contract's fourth output).
  flash::AttentionBwdParams p;
  p.o = flash::ToArg(in[3]);
  p.dout = flash::ToArg(in[4]);
  p.dvec = out[3].as<float>();
  p.B = static_cast<int>(in[0].dim(0)), p.T = static_cast<int>(in[0].dim(1));
  p.H = static_cast<int>(in[0].dim(2)), p.D = static_cast<int>(in[0].dim(3));
  p.dtype = in[0].dtype;
  RETURN_IF_CUDA_ERROR(flash::LaunchAttentionDvec(p, ctx.stream));
  return absl::OkStatus();
}

std::string CudnnAttentionKernelPath(const OpDesc& desc, int head_dim, const CudaContext& ctx) {
  const char* op = desc.op == Op::kAttentionFwd ? "fwd" : desc.op == Op::kAttentionBwd ? "bwd" : nullptr;
  if (op == nullptr) return absl::StrCat("cudnn_sdpa_unsupported_", OpName(desc.op));
  return absl::StrCat("cudnn_sdpa_", op, "_d", head_dim, "_sm", ctx.sm, "_v", CudnnAttentionVersion(),
                      DeterministicBwd(desc, ctx) ? "_det" : "");
}

#else  // !FLASHTICK_WITH_CUDNN

namespace {
absl::Status NotBuilt() {
  return absl::UnimplementedError(
      "cudnn_sdpa: this build has no cuDNN backend (configure found no cudnn-frontend header or "
      "cuDNN; see FLASHTICK_CUDNN_FRONTEND_INCLUDE in docs/kernels/cudnn.md)");
}
}  // namespace

bool CudnnAttentionBuilt() { return false; }
int64_t CudnnAttentionVersion() { return 0; }
absl::Status CudnnAttentionPrepare(const OpDesc&, In, Out, CudaContext&) { return NotBuilt(); }
absl::Status CudnnAttentionFwd(const OpDesc&, In, Out, CudaContext&) { return NotBuilt(); }
absl::Status CudnnAttentionBwd(const OpDesc&, In, Out, CudaContext&) { return NotBuilt(); }
std::string CudnnAttentionKernelPath(const OpDesc&, int, const CudaContext&) { return "cudnn_sdpa_unavailable"; }

#endif  // FLASHTICK_WITH_CUDNN

}  // namespace flashtick::cuda
