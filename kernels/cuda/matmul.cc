// Matmul on CUDA through cuBLASLt (kernels/ops/matmul.h): C = alpha·op(A)·op(B) + beta·C
// (+ b), bf16/fp16 in and out with fp32 accumulation (CUBLAS_COMPUTE_32F), or fp32
// throughout (true fp32, not TF32, so the fp32 path is a parity reference).
// Row-major trick: cuBLASLt is column-major, and a row-major [R, C] matrix with row
// stride ld is the column-major [C, R] matrix (its transpose) with leading dim ld. So
// we ask for Cᵀ = op(B)ᵀ·op(A)ᵀ: B's memory is cuBLASLt's first operand (m = N), A's
// the second (n = M), and each operand's transpose flag carries over unchanged.
// The bias runs in cuBLASLt's CUBLASLT_EPILOGUE_BIAS, which adds a vector of length m
// (D's rows) to every column of column-major D: with m = N that is our b [N] on every
// row of row-major C. b is fp32 (ParamDType); beside a bf16/fp16 C cuBLASLt refuses an
// fp32 bias (its heuristic answers INVALID_VALUE; cuBLAS 13 on an H100, 2026-12-07,
// bench/results/h100-2026-12-07-lags3-repeat-sweep), so a 16-bit matmul first casts b
// to C's dtype into a reserved tail of the cuBLASLt workspace (kBiasCopyBytes: fixed
// device memory, so the launch can be captured in a CUDA graph, where scratch memory
// cannot) and the epilogue adds that copy. The result is rounded twice, as with the
// row pass it replaces (b to 16 bits, then the sum; there the GEMM, then the sum).
// Should the heuristic offer no algorithm with the epilogue, or b be wider than the
// reserved tail, the plain GEMM runs and the bias is added by the row-map kernel after
// it (Op::kAddBias's), as before the fusion.
// attrs.gelu runs in CUBLASLT_EPILOGUE_GELU (GELU_BIAS with a bias): cuBLASLt's GELU is
// the tanh form of Op::kGelu, applied to the fp32 sum before its one rounding. Wherever
// the epilogue cannot run (no algorithm, the CUDA-core GEMM, the bias in a row pass), the
// row-map kGelu kernel runs in place after the bias, as Op::kGelu would.
// The algorithm comes from cuBLASLt's heuristic once per shape, layout and pointer
// alignment, and is cached (the same shapes repeat every training step). Where the
// heuristic has no algorithm (thin, unaligned layouts such as the K = 6 embedding or
// the N = 3 head in bf16), our CUDA-core GEMM (matmul_simt.cu) runs instead; those
// matmuls are memory-bound, so it costs nothing measurable.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops/matmul.h"

namespace flashtick::cuda {
namespace {

// The tail of the cuBLASLt workspace that holds a 16-bit copy of the bias (header):
// 64 Ki elements, wider than any linear layer we build; cuBLASLt gets the rest.
constexpr size_t kBiasCopyBytes = size_t{128} << 10;

size_t GemmWorkspaceBytes(const CudaContext& ctx) {
  return ctx.workspace_bytes > kBiasCopyBytes ? ctx.workspace_bytes - kBiasCopyBytes : 0;
}

// Where a 16-bit matmul's bias copy goes, or nullptr when b does not fit the tail.
void* BiasCopySlot(const CudaContext& ctx, DType dtype, int64_t n) {
  if (ctx.workspace == nullptr || ctx.workspace_bytes <= kBiasCopyBytes) return nullptr;
  if (static_cast<size_t>(n) * DTypeSize(dtype) > kBiasCopyBytes) return nullptr;
  return static_cast<char*>(ctx.workspace) + GemmWorkspaceBytes(ctx);
}

// Held while a bias copy is written and the GEMM reading it is enqueued (Matmul). One
// for the process: the enqueues take microseconds, and a lock per workspace would need a
// registry of workspaces for no measurable gain.
std::mutex& BiasSlotMutex() {
  static std::mutex* mu = new std::mutex();  // never destroyed: outlives static teardown
  return *mu;
}

// Largest power of two dividing the address, at most 256 (what cuBLASLt asks about).
uint32_t PointerAlignment(const void* p) {
  constexpr uintptr_t kMax = 256;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uintptr_t align = 1;
  while (align < kMax && a % (align * 2) == 0) align *= 2;
  return static_cast<uint32_t>(align);
}

// BLAS leading dimension of a row-major rank-2 view: its row stride, or its width
// when there is a single row (whose stride is never stepped and may be anything).
int64_t LeadingDim(const TensorView& t) {
  return t.dim(0) > 1 ? t.stride(0) : std::max<int64_t>(t.dim(1), 1);
}

// The bias and GELU are part of the key: the epilogue changes which algorithms the
// heuristic offers (and the bias pointer's alignment is one of its inputs).
struct PlanKey {
  cublasLtHandle_t handle;
  DType dtype;
  bool ta, tb, bias, gelu;
  int64_t M, N, K, lda, ldb, ldc;
  uint32_t align_a, align_b, align_c, align_bias;
  bool operator<(const PlanKey& o) const {
    return std::tie(handle, dtype, ta, tb, bias, gelu, M, N, K, lda, ldb, ldc, align_a, align_b,
                    align_c, align_bias) < std::tie(o.handle, o.dtype, o.ta, o.tb, o.bias, o.gelu,
                                                    o.M, o.N, o.K, o.lda, o.ldb, o.ldc, o.align_a,
                                                    o.align_b, o.align_c, o.align_bias);
  }
};

// cuBLASLt's choice for a key, or none (use the CUDA-core GEMM, bias fused there too).
enum class Path : uint8_t {
  kSimt,              // the CUDA-core GEMM (matmul_simt.cu)
  kCublasLt,          // cuBLASLt, with the key's bias and GELU in its epilogue
  kCublasLtThenBias,  // cuBLASLt without an epilogue, then the row-map bias add and GELU
};
struct Plan {
  Path path = Path::kSimt;
  cublasLtMatmulAlgo_t algo{};
};

// Heuristic results per key. Bounded: a long-running server sees a handful of shapes,
// but a shape sweep should not grow this forever.
class AlgoCache {
 public:
  static constexpr size_t kMaxEntries = 4096;
  bool Find(const PlanKey& key, Plan* algo) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    *algo = it->second;
    return true;
  }
  void Insert(const PlanKey& key, const Plan& algo) {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kMaxEntries) map_.clear();
    map_[key] = algo;
  }

 private:
  std::mutex mu_;
  std::map<PlanKey, Plan> map_;
};

AlgoCache& Cache() {
  static AlgoCache* cache = new AlgoCache();  // never destroyed: outlives static teardown
  return *cache;
}

struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublasLtMatmulDescDestroy(d); }
  void operator()(cublasLtMatrixLayoutOpaque_t* d) const { cublasLtMatrixLayoutDestroy(d); }
  void operator()(cublasLtMatmulPreferenceOpaque_t* d) const { cublasLtMatmulPreferenceDestroy(d); }
};
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, DescDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, DescDeleter>;

absl::StatusOr<Layout> MakeLayout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t raw = nullptr;
  RETURN_IF_CUBLAS_ERROR(cublasLtMatrixLayoutCreate(&raw, type, static_cast<uint64_t>(rows),
                                                    static_cast<uint64_t>(cols), ld));
  return Layout(raw);
}

// C += b[col] on every row, in place (Op::kAddBias's kernel); b is fp32 (ParamDType).
absl::Status AddBiasRows(const TensorView& c, const void* bias, const MatmulShape& s,
                         CudaContext& ctx) {
  MapParams p;
  p.rows = s.M;
  p.cols = s.N;
  p.t[0] = p.t[1] = RowArg{c.data, LeadingDim(c)};
  p.bias = static_cast<const float*>(bias);
  RETURN_IF_CUDA_ERROR(LaunchRowMap(MapOp::kAddBias, c.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

// C = GELU(C) in place (Op::kGelu's kernel), where the epilogue could not apply it.
absl::Status GeluRows(const TensorView& c, const MatmulShape& s, CudaContext& ctx) {
  MapParams p;
  p.rows = s.M;
  p.cols = s.N;
  p.t[0] = p.t[1] = RowArg{c.data, LeadingDim(c)};
  RETURN_IF_CUDA_ERROR(LaunchRowMap(MapOp::kGelu, c.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

// The row passes a GEMM without an epilogue leaves to do: + b, then GELU.
absl::Status RowPassesAfterGemm(const OpDesc& desc, const TensorView& c, const void* bias,
                                const MatmulShape& s, CudaContext& ctx) {
  if (bias != nullptr) RETURN_IF_ERROR(AddBiasRows(c, bias, s, ctx));
  return desc.matmul.gelu ? GeluRows(c, s, ctx) : absl::OkStatus();
}

// C = beta·C when K = 0 (BLAS: beta = 0 writes zeros without reading C).
absl::Status ScaleOnly(const OpDesc& desc, const TensorView& c, const MatmulShape& s,
                       CudaContext& ctx) {
  const float beta = desc.matmul.beta;
  if (beta == 1.0f) return absl::OkStatus();
  const size_t elem = DTypeSize(c.dtype);
  if (beta == 0.0f) {
    RETURN_IF_CUDA_ERROR(
        cudaMemset2DAsync(c.data, LeadingDim(c) * elem, 0, s.N * elem, s.M, ctx.stream));
    return absl::OkStatus();
  }
  MapParams p;
  p.rows = s.M;
  p.cols = s.N;
  p.t[0] = p.t[1] = RowArg{c.data, LeadingDim(c)};
  p.scalar = beta;
  RETURN_IF_CUDA_ERROR(LaunchRowMap(MapOp::kScale, c.dtype, p, ctx.num_sms, ctx.stream));
  return absl::OkStatus();
}

// The CUDA-core GEMM, in launches of at most kMaxRows rows of C (its grid-y limit).
absl::Status SimtGemm(const OpDesc& desc, const TensorView& a, const TensorView& b,
                      const TensorView& c, const void* bias, const MatmulShape& s,
                      CudaContext& ctx) {
  constexpr int64_t kMaxRows = int64_t{65535} * 64;
  const size_t es = DTypeSize(desc.dtype);
  for (int64_t m0 = 0; m0 < s.M; m0 += kMaxRows) {
    SimtGemmParams p;
    p.M = std::min(kMaxRows, s.M - m0);
    p.N = s.N;
    p.K = s.K;
    p.lda = LeadingDim(a);
    p.ldb = LeadingDim(b);
    p.ldc = LeadingDim(c);
    p.trans_a = desc.matmul.trans_a;
    p.trans_b = desc.matmul.trans_b;
    p.alpha = desc.matmul.alpha;
    p.beta = desc.matmul.beta;
    // Row m0 of op(A) is row m0 of A, or column m0 of A when transposed.
    p.a = static_cast<const char*>(a.data) + (p.trans_a ? m0 : m0 * p.lda) * es;
    p.b = b.data;
    p.c = static_cast<char*>(c.data) + m0 * p.ldc * es;
    p.bias = static_cast<const float*>(bias);
    RETURN_IF_CUDA_ERROR(LaunchSimtGemm(desc.dtype, p, ctx.stream));
  }
  return absl::OkStatus();
}

// The heuristic's first algorithm for `op` and the layouts, or none: NOT_SUPPORTED is
// how cuBLASLt says "no algorithm for this layout".
absl::StatusOr<bool> FindAlgo(const PlanKey& key, cublasLtMatmulDesc_t op,
                              cublasLtMatrixLayout_t first, cublasLtMatrixLayout_t second,
                              cublasLtMatrixLayout_t out_layout, CudaContext& ctx,
                              cublasLtMatmulAlgo_t* algo) {
  cublasLtMatmulPreference_t raw_pref = nullptr;
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulPreferenceCreate(&raw_pref));
  Preference pref(raw_pref);
  const uint64_t ws = GemmWorkspaceBytes(ctx);
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulPreferenceSetAttribute(
      pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  // Tell the heuristic how aligned the pointers really are, so it never picks a
  // kernel that assumes more (slices of fused buffers can be 2-byte aligned).
  const uint32_t align_first = key.align_b, align_second = key.align_a, align_c = key.align_c;
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulPreferenceSetAttribute(
      pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_first, sizeof(uint32_t)));
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulPreferenceSetAttribute(
      pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_second, sizeof(uint32_t)));
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulPreferenceSetAttribute(
      pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof(uint32_t)));
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulPreferenceSetAttribute(
      pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof(uint32_t)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
      ctx.cublaslt, op, first, second, out_layout, out_layout, pref.get(), 1, &result, &found);
  if (st != CUBLAS_STATUS_NOT_SUPPORTED) RETURN_IF_CUBLAS_ERROR(st);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) return false;
  *algo = result.algo;
  return true;
}

absl::Status SetEpilogue(cublasLtMatmulDesc_t op, cublasLtEpilogue_t epilogue) {
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                        &epilogue, sizeof(epilogue)));
  return absl::OkStatus();
}

}  // namespace

absl::Status Matmul(const OpDesc& desc, In in, Out out, CudaContext& ctx) {
  MatmulShape s;
  RETURN_IF_ERROR(CheckMatmulArgs(desc, in, out, &s));
  const TensorView &a = in[0], &b = in[1], &c = out[0];
  // b [N], fp32 for every CUDA dtype (ParamDType), checked by CheckMatmulArgs.
  const void* bias = desc.matmul.bias ? in[2].data : nullptr;
  if (s.M == 0 || s.N == 0) return absl::OkStatus();
  if (s.K == 0) {
    RETURN_IF_ERROR(ScaleOnly(desc, c, s, ctx));
    return RowPassesAfterGemm(desc, c, bias, s, ctx);
  }

  cudaDataType_t type;
  switch (desc.dtype) {
    case DType::kBF16: type = CUDA_R_16BF; break;
    case DType::kF16: type = CUDA_R_16F; break;
    case DType::kF32: type = CUDA_R_32F; break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("flash_cuda matmul runs bf16, fp16 or fp32; got ", DTypeName(desc.dtype)));
  }
  const bool ta = desc.matmul.trans_a, tb = desc.matmul.trans_b;
  const int64_t lda = LeadingDim(a), ldb = LeadingDim(b), ldc = LeadingDim(c);

  cublasLtMatmulDesc_t raw_desc = nullptr;
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulDescCreate(&raw_desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  MatmulDesc op(raw_desc);
  // cuBLASLt's first operand is B's memory with B's flag, its second A's (header).
  const cublasOperation_t op_first = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulDescSetAttribute(op.get(), CUBLASLT_MATMUL_DESC_TRANSA,
                                                        &op_first, sizeof(op_first)));
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmulDescSetAttribute(op.get(), CUBLASLT_MATMUL_DESC_TRANSB,
                                                        &op_second, sizeof(op_second)));
  // The epilogue's bias: b itself in fp32, else its copy in C's dtype (header), written
  // just before the GEMM that reads it.
  void* bias_copy =
      bias != nullptr && desc.dtype != DType::kF32 ? BiasCopySlot(ctx, desc.dtype, s.N) : nullptr;
  const void* epilogue_bias = desc.dtype == DType::kF32 ? bias : bias_copy;
  // A bias that cannot go in the epilogue (wider than the copy's slot) sends the whole
  // epilogue, GELU too, to the row passes: GELU must follow the bias.
  const bool bias_in_rows = bias != nullptr && epilogue_bias == nullptr;
  const bool gelu = desc.matmul.gelu && !bias_in_rows;
  if (epilogue_bias != nullptr) {
    // D is N×M column-major, so the epilogue's per-row-of-D vector is our b [N] (header).
    // The pointer is set before the heuristic: its alignment is one of the inputs. The
    // bias type is left at its default, D's.
    RETURN_IF_ERROR(SetEpilogue(op.get(), gelu ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS));
    RETURN_IF_CUBLAS_ERROR(cublasLtMatmulDescSetAttribute(
        op.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &epilogue_bias, sizeof(epilogue_bias)));
  } else if (gelu) {
    RETURN_IF_ERROR(SetEpilogue(op.get(), CUBLASLT_EPILOGUE_GELU));
  }
  const bool epilogue = epilogue_bias != nullptr || gelu;
  // Stored (column-major) shapes: first operand N×K (or K×N when transposed), second
  // K×M (or M×K), output N×M.
  ASSIGN_OR_RETURN(Layout first, MakeLayout(type, tb ? s.K : s.N, tb ? s.N : s.K, ldb));
  ASSIGN_OR_RETURN(Layout second, MakeLayout(type, ta ? s.M : s.K, ta ? s.K : s.M, lda));
  ASSIGN_OR_RETURN(Layout out_layout, MakeLayout(type, s.N, s.M, ldc));

  const PlanKey key{ctx.cublaslt,
                    desc.dtype,
                    ta,
                    tb,
                    bias != nullptr,
                    desc.matmul.gelu,
                    s.M,
                    s.N,
                    s.K,
                    lda,
                    ldb,
                    ldc,
                    PointerAlignment(a.data),
                    PointerAlignment(b.data),
                    PointerAlignment(c.data),
                    epilogue_bias != nullptr ? PointerAlignment(epilogue_bias) : 0u};
  Plan plan;
  if (!Cache().Find(key, &plan)) {
    ASSIGN_OR_RETURN(bool found, FindAlgo(key, op.get(), first.get(), second.get(),
                                          out_layout.get(), ctx, &plan.algo));
    plan.path = !found ? Path::kSimt : bias_in_rows ? Path::kCublasLtThenBias : Path::kCublasLt;
    if (!found && epilogue) {
      // No algorithm with the epilogue: the plain GEMM, if it has one, then the row passes.
      RETURN_IF_ERROR(SetEpilogue(op.get(), CUBLASLT_EPILOGUE_DEFAULT));
      ASSIGN_OR_RETURN(found, FindAlgo(key, op.get(), first.get(), second.get(), out_layout.get(),
                                       ctx, &plan.algo));
      if (found) plan.path = Path::kCublasLtThenBias;
    }
    Cache().Insert(key, plan);
  }
  if (plan.path == Path::kSimt) {
    RETURN_IF_ERROR(SimtGemm(desc, a, b, c, bias, s, ctx));  // the bias fused there
    return desc.matmul.gelu ? GeluRows(c, s, ctx) : absl::OkStatus();
  }
  if (plan.path == Path::kCublasLtThenBias)
    RETURN_IF_ERROR(SetEpilogue(op.get(), CUBLASLT_EPILOGUE_DEFAULT));
  // The copy's slot is one per workspace, and threads share a backend's stream (a
  // server's models share one backend): the cast and the GEMM that reads it are enqueued
  // under one lock, so no other matmul's cast lands between them on the stream.
  std::unique_lock<std::mutex> slot_lock;
  if (plan.path == Path::kCublasLt && bias_copy != nullptr) {
    slot_lock = std::unique_lock<std::mutex>(BiasSlotMutex());
    RETURN_IF_CUDA_ERROR(LaunchCast(DType::kF32, desc.dtype, 1, s.N,
                                    RowArg{const_cast<void*>(bias), s.N}, RowArg{bias_copy, s.N},
                                    ctx.num_sms, ctx.stream));
  }
  const float alpha = desc.matmul.alpha, beta = desc.matmul.beta;
  RETURN_IF_CUBLAS_ERROR(cublasLtMatmul(ctx.cublaslt, op.get(), &alpha, b.data, first.get(), a.data,
                                        second.get(), &beta, c.data, out_layout.get(), c.data,
                                        out_layout.get(), &plan.algo, ctx.workspace,
                                        GemmWorkspaceBytes(ctx), ctx.stream));
  if (plan.path == Path::kCublasLtThenBias) return RowPassesAfterGemm(desc, c, bias, s, ctx);
  return absl::OkStatus();
}

}  // namespace flashtick::cuda
