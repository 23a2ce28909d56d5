// The emulator's scheduler and collectives (see emu_intrinsics.h). One CTA at a time:
// every thread is a ucontext coroutine; a pass resumes each runnable thread until it
// blocks (collective, barrier or exit), then completes every warp whose 32 lanes wait
// on the same collective and releases the barrier once every live thread waits on it.
// A pass with no progress is a deadlock (e.g. a barrier inside divergent code) and
// aborts with a message. wgmma, its commit and its wait are collectives of a warpgroup
// (4 warps, 128 threads), completed once all 128 wait on them. wgmma is asynchronous as on
// the GPU: an issued wgmma only joins the warpgroup's open group, commit closes the group,
// and wait_group N runs every committed group but the newest N, reading shared memory and
// the A registers then. In flight, the accumulators hold NaN (their values live in a
// shadow), so a kernel that reads them before the wait gets NaN, one that writes them
// aborts, and one that ends with a wgmma not waited for aborts.
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "kernels/common/half.h"
#include "tests/cuda_emu/emu_intrinsics.h"

namespace flashtick::emu {
namespace {

constexpr int kWarp = 32;
constexpr size_t kStackBytes = 256 * 1024;

enum class Wait { kRunnable, kCollective, kBarrier, kDone, kYield };
enum class Coll {
  kNone, kShfl, kMmaBf16, kMmaF16, kLdMatrix, kLdMatrixTrans, kWgmma, kWgmmaCommit, kWgmmaWait
};

struct WgmmaOp {
  float* d = nullptr;
  int n = 0;
  const uint32_t* a = nullptr;
  uint64_t desc_a = 0, desc_b = 0;
  bool trans_b = false, bf16 = true, accumulate = true;
  bool trans_a = false;  // A from shared memory, MN-major
};

struct Thread {
  ThreadState state;
  ucontext_t ctx;
  std::vector<char> stack;
  Wait wait = Wait::kRunnable;
  Coll coll = Coll::kNone;
  // Collective operands (pointers into the thread's own stack frame).
  float shfl_in = 0, shfl_out = 0;
  int shfl_mask = 0;
  float* mma_d = nullptr;
  const uint32_t* mma_a = nullptr;
  const uint32_t* mma_b = nullptr;
  const void* ld_addr = nullptr;
  uint32_t* ld_out = nullptr;
  WgmmaOp wgmma;
  int wgmma_pending = 0;  // wgmma_wait's N
};

// One issued wgmma of a warpgroup: the operation and each thread's d and a registers.
struct PendingWgmma {
  WgmmaOp op;
  std::vector<float*> d;            // 128 threads' accumulators
  std::vector<const uint32_t*> a;   // their A registers (register-sourced A), else null
};

// A warpgroup's wgmma in flight: the open group, the committed groups (oldest first),
// and the shadow values of the accumulators they write.
struct WarpgroupQueue {
  std::vector<PendingWgmma> open;
  std::vector<std::vector<PendingWgmma>> committed;
  std::map<float*, std::vector<float>> shadow;  // accumulator → its values while in flight
};

// An mbarrier (PTX ISA, "Parallel Synchronization and Communication Instructions:
// mbarrier"): a phase completes when its expected arrivals have arrived and its
// transaction count is back to zero; then the phase bit flips and the arrivals reset.
struct MbarState {
  int count = 0, pending = 0;
  int64_t tx = 0;
  int phase = 0;
};

struct Cta {
  std::vector<Thread> threads;
  std::map<size_t, MbarState> mbar;  // by shared-memory offset of the 8-byte barrier
  std::vector<WarpgroupQueue> wgmma;  // one per warpgroup of the CTA
  std::vector<unsigned char> smem;
  ucontext_t scheduler;
  int current = -1;
  const std::function<void()>* fn = nullptr;
};

Cta* g_cta = nullptr;
ThreadState g_host_state;

Thread& Self() { return g_cta->threads[g_cta->current]; }

void Block(Wait w) {
  Thread& t = Self();
  t.wait = w;
  swapcontext(&t.ctx, &g_cta->scheduler);
}

void Trampoline() {
  (*g_cta->fn)();
  Self().wait = Wait::kDone;
  setcontext(&g_cta->scheduler);
}

float Half16ToFloat(bool bf16, uint16_t bits) { return bf16 ? Bf16BitsToFloat(bits) : HalfBitsToFloat(bits); }

// The half of a register of 16-bit pairs that holds column (or k) `col`: the lower column
// sits in the low 16 bits.
uint16_t PairHalf(uint32_t v, int col) { return static_cast<uint16_t>(col % 2 ? v >> 16 : v & 0xffff); }

// Where element (row, col) of a warp's 16×16 A fragment lives (mma.m16n8k16, and each
// warp's 16 rows of wgmma's register-sourced A): the lane and its register.
struct FragSlot {
  int lane, reg;
};
FragSlot FragASlot(int row, int col) { return {(row % 8) * 4 + (col % 8) / 2, row / 8 + 2 * (col / 8)}; }

// Element (row, col) of the A (16×16), B (16×8 as k×n) fragments from lane registers.
float FragA(Coll kind, Thread* lanes, int row, int col) {
  const FragSlot s = FragASlot(row, col);
  return Half16ToFloat(kind == Coll::kMmaBf16, PairHalf(lanes[s.lane].mma_a[s.reg], col));
}

float FragB(Coll kind, Thread* lanes, int k, int n) {
  const int t = (k % 8) / 2, reg = k / 8;
  return Half16ToFloat(kind == Coll::kMmaBf16, PairHalf(lanes[n * 4 + t].mma_b[reg], k));
}

void RunMma(Thread* lanes, Coll kind) {
  float d[16][8];
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) {
      const int g = r % 8, t = c / 2, reg = (r / 8) * 2 + c % 2;
      float acc = lanes[g * 4 + t].mma_d[reg];
      for (int k = 0; k < 16; ++k) acc += FragA(kind, lanes, r, k) * FragB(kind, lanes, k, c);
      d[r][c] = acc;
    }
  for (int l = 0; l < kWarp; ++l) {
    const int g = l / 4, t = l % 4;
    lanes[l].mma_d[0] = d[g][2 * t];
    lanes[l].mma_d[1] = d[g][2 * t + 1];
    lanes[l].mma_d[2] = d[g + 8][2 * t];
    lanes[l].mma_d[3] = d[g + 8][2 * t + 1];
  }
}

void RunLdMatrix(Thread* lanes, bool trans) {
  for (int m = 0; m < 4; ++m) {
    uint16_t mat[8][8];
    for (int r = 0; r < 8; ++r) {
      const uintptr_t a = reinterpret_cast<uintptr_t>(lanes[8 * m + r].ld_addr);
      if (a % 16 != 0) {
        std::fprintf(stderr, "emu: ldmatrix row address not 16-byte aligned\n");
        std::abort();
      }
      std::memcpy(mat[r], lanes[8 * m + r].ld_addr, 16);
    }
    for (int l = 0; l < kWarp; ++l) {
      const int g = l / 4, t = l % 4;
      const uint16_t lo = trans ? mat[2 * t][g] : mat[g][2 * t];
      const uint16_t hi = trans ? mat[2 * t + 1][g] : mat[g][2 * t + 1];
      lanes[l].ld_out[m] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
    }
  }
}

// ---- wgmma ----------------------------------------------------------------------------
// Byte offset in shared memory of element (mn, k) of a 16-bit operand tile through its
// descriptor, following the canonical layouts of kernels/cuda/attention/sm90/wgmma.cuh.
size_t GmmaElementOffset(uint64_t desc, bool mn_major, int mn, int k) {
  const uint64_t start = (desc & 0x3fff) << 4, lbo = ((desc >> 16) & 0x3fff), sbo = ((desc >> 32) & 0x3fff);
  const int mode = static_cast<int>(desc >> 62);
  const int W = mode == 1 ? 8 : mode == 2 ? 4 : mode == 3 ? 2 : 1;
  constexpr int T = 8;  // 16-bit elements per 16-byte unit
  uint64_t unit = 0;
  int e = 0;
  if (!mn_major) {
    const int i0 = mn % 8, i1 = mn / 8, kk = k / T;
    e = k % T;
    unit = uint64_t(i0) * W + uint64_t(i1) * sbo + uint64_t(kk) * (W == 1 ? lbo : 1);
  } else {
    e = mn % T;
    const int j_all = mn / T, w = j_all % W, j = j_all / W, k0 = k % 8, k1 = k / 8;
    unit = W == 1 ? uint64_t(j_all) * sbo + k0 + uint64_t(k1) * lbo
                  : uint64_t(w) + uint64_t(j) * lbo + uint64_t(k0) * W + uint64_t(k1) * sbo;
  }
  uint64_t addr = start + unit * 16 + uint64_t(e) * 2;
  if (W > 1) {
    const int bits = W == 8 ? 3 : W == 4 ? 2 : 1;
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    addr ^= ((addr >> 7) & mask) << 4;
  }
  return static_cast<size_t>(addr);
}

float SmemElem(bool bf16, size_t offset) {
  if (offset + 2 > g_cta->smem.size()) {
    std::fprintf(stderr, "emu: wgmma operand at byte %zu is outside the %zu bytes of shared memory\n",
                 offset, g_cta->smem.size());
    std::abort();
  }
  uint16_t bits;
  std::memcpy(&bits, g_cta->smem.data() + offset, 2);
  return Half16ToFloat(bf16, bits);
}

[[noreturn]] void WgmmaAbort(const char* what) {
  std::fprintf(stderr, "emu: %s\n", what);
  std::abort();
}

// Issue: the warpgroup's 128 threads agree on the operation; it joins the open group,
// and each accumulator not yet in flight moves into the shadow, leaving NaN behind.
void IssueWgmma(Thread* group, WarpgroupQueue& q) {
  const WgmmaOp& op = group[0].wgmma;
  PendingWgmma pend{op, std::vector<float*>(4 * kWarp), std::vector<const uint32_t*>(4 * kWarp)};
  for (int i = 0; i < 4 * kWarp; ++i) {
    const WgmmaOp& o = group[i].wgmma;
    if (o.n != op.n || o.desc_b != op.desc_b || o.trans_b != op.trans_b || o.bf16 != op.bf16 ||
        o.accumulate != op.accumulate || o.trans_a != op.trans_a || (o.a == nullptr) != (op.a == nullptr) ||
        (op.a == nullptr && o.desc_a != op.desc_a))
      WgmmaAbort("the threads of a warpgroup issue different wgmma");
    pend.d[i] = o.d;
    pend.a[i] = o.a;
    auto [it, fresh] = q.shadow.try_emplace(o.d);
    if (fresh) {
      it->second.assign(o.d, o.d + op.n / 2);
      std::fill(o.d, o.d + op.n / 2, std::numeric_limits<float>::quiet_NaN());
    }
  }
  q.open.push_back(std::move(pend));
}

// Runs one issued wgmma on the shadow accumulators, reading shared memory and the A
// registers now, as the asynchronous unit does.
void ExecuteWgmma(const PendingWgmma& pend, WarpgroupQueue& q) {
  const WgmmaOp& op = pend.op;
  const int N = op.n;
  std::vector<float> A(64 * 16), B(16 * N);
  for (int m = 0; m < 64; ++m)
    for (int k = 0; k < 16; ++k) {
      if (op.a != nullptr) {  // warp m / 16's A fragment holds rows m of the warpgroup's 64
        const FragSlot s = FragASlot(m % 16, k);
        A[m * 16 + k] = Half16ToFloat(op.bf16, PairHalf(pend.a[(m / 16) * kWarp + s.lane][s.reg], k));
      } else {
        A[m * 16 + k] = SmemElem(op.bf16, GmmaElementOffset(op.desc_a, op.trans_a, m, k));
      }
    }
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < N; ++n)
      B[k * N + n] = SmemElem(op.bf16, GmmaElementOffset(op.desc_b, op.trans_b, n, k));
  for (int i = 0; i < 4 * kWarp; ++i) {
    const int w = i / kWarp, l = i % kWarp, g = l / 4, t = l % 4;
    std::vector<float>& d = q.shadow.at(pend.d[i]);
    for (int j = 0; j < N / 8; ++j)
      for (int v = 0; v < 4; ++v) {
        const int m = 16 * w + g + 8 * (v / 2), n = 8 * j + 2 * t + v % 2;
        float acc = op.accumulate ? d[4 * j + v] : 0.0f;
        for (int k = 0; k < 16; ++k) acc += A[m * 16 + k] * B[k * N + n];
        d[4 * j + v] = acc;
      }
  }
}

// wait_group N: runs the committed groups but the newest N, then hands back every
// accumulator no wgmma in flight still writes (checking that the kernel left its NaN).
void WaitWgmma(WarpgroupQueue& q, int pending) {
  if (!q.open.empty()) WgmmaAbort("wgmma.wait_group with wgmma issued but not committed");
  while (static_cast<int>(q.committed.size()) > pending) {
    for (const PendingWgmma& pend : q.committed.front()) ExecuteWgmma(pend, q);
    q.committed.erase(q.committed.begin());
  }
  for (auto it = q.shadow.begin(); it != q.shadow.end();) {
    bool busy = false;
    for (const auto& grp : q.committed)
      for (const PendingWgmma& pend : grp)
        for (float* d : pend.d) busy |= d == it->first;
    if (busy) {
      ++it;
      continue;
    }
    float* d = it->first;
    for (size_t i = 0; i < it->second.size(); ++i) {
      if (!std::isnan(d[i])) WgmmaAbort("an accumulator was written while a wgmma on it was in flight");
      d[i] = it->second[i];
    }
    it = q.shadow.erase(it);
  }
}

// Completes warpgroup `group`'s wgmma collective (issue, commit or wait) if all 128
// threads wait on the same one.
bool TryWarpgroupCollective(Thread* group, WarpgroupQueue& q) {
  const Coll kind = group[0].coll;
  if (kind != Coll::kWgmma && kind != Coll::kWgmmaCommit && kind != Coll::kWgmmaWait) return false;
  for (int i = 0; i < 4 * kWarp; ++i)
    if (group[i].wait != Wait::kCollective || group[i].coll != kind) return false;
  switch (kind) {
    case Coll::kWgmma: IssueWgmma(group, q); break;
    case Coll::kWgmmaCommit:
      q.committed.push_back(std::move(q.open));
      q.open.clear();
      break;
    default: WaitWgmma(q, group[0].wgmma_pending); break;
  }
  for (int i = 0; i < 4 * kWarp; ++i) group[i].wait = Wait::kRunnable, group[i].coll = Coll::kNone;
  return true;
}

// Completes warp w's collective if all its lanes wait on one. Returns true if it ran.
bool TryCollective(Thread* lanes) {
  for (int l = 0; l < kWarp; ++l)
    if (lanes[l].wait != Wait::kCollective) return false;
  const Coll kind = lanes[0].coll;
  if (kind == Coll::kWgmma || kind == Coll::kWgmmaCommit || kind == Coll::kWgmmaWait)
    return false;  // warpgroup collectives (TryWarpgroupCollective)
  for (int l = 0; l < kWarp; ++l)
    if (lanes[l].coll != kind) {
      std::fprintf(stderr, "emu: lanes of one warp wait on different collectives (divergence)\n");
      std::abort();
    }
  switch (kind) {
    case Coll::kShfl:
      for (int l = 0; l < kWarp; ++l) lanes[l].shfl_out = lanes[l ^ lanes[l].shfl_mask].shfl_in;
      break;
    case Coll::kMmaBf16:
    case Coll::kMmaF16: RunMma(lanes, kind); break;
    case Coll::kLdMatrix: RunLdMatrix(lanes, false); break;
    case Coll::kLdMatrixTrans: RunLdMatrix(lanes, true); break;
    case Coll::kWgmma:
    case Coll::kWgmmaCommit:
    case Coll::kWgmmaWait:
    case Coll::kNone: break;
  }
  for (int l = 0; l < kWarp; ++l) lanes[l].wait = Wait::kRunnable, lanes[l].coll = Coll::kNone;
  return true;
}

// A fresh coroutine for thread `i` of CTA (x, y, z). Out of line: getcontext "returns
// twice" as far as the compiler knows, and the caller's loop variables must not share
// its frame (-Wclobbered).
[[gnu::noinline]] void InitThread(Thread& t, int i, Dim3 block, Dim3 grid) {
  t.state = ThreadState{{static_cast<unsigned>(i), 0, 0}, block, grid};
  t.wait = Wait::kRunnable;
  t.coll = Coll::kNone;
  getcontext(&t.ctx);
  t.ctx.uc_stack.ss_sp = t.stack.data();
  t.ctx.uc_stack.ss_size = t.stack.size();
  t.ctx.uc_link = nullptr;
  makecontext(&t.ctx, Trampoline, 0);
}

void RunCta(Cta& cta) {
  const int n = static_cast<int>(cta.threads.size());
  for (;;) {
    bool progress = false;
    for (int i = 0; i < n; ++i) {
      if (cta.threads[i].wait != Wait::kRunnable && cta.threads[i].wait != Wait::kYield) continue;
      cta.current = i;
      swapcontext(&cta.scheduler, &cta.threads[i].ctx);
      // A thread that only yielded (a spin on an mbarrier) made no progress by itself.
      if (cta.threads[i].wait == Wait::kYield) continue;
      progress = true;
    }
    cta.current = -1;
    for (int w = 0; w * kWarp < n; ++w) progress |= TryCollective(&cta.threads[w * kWarp]);
    for (int g = 0; (g + 1) * 4 * kWarp <= n; ++g)
      progress |= TryWarpgroupCollective(&cta.threads[g * 4 * kWarp], cta.wgmma[g]);
    int done = 0, at_barrier = 0;
    for (auto& t : cta.threads) done += t.wait == Wait::kDone, at_barrier += t.wait == Wait::kBarrier;
    if (done == n) {
      for (const WarpgroupQueue& q : cta.wgmma)
        if (!q.open.empty() || !q.committed.empty())
          WgmmaAbort("the kernel ended with a wgmma not waited for");
      return;
    }
    if (at_barrier > 0 && at_barrier + done == n) {
      for (auto& t : cta.threads)
        if (t.wait == Wait::kBarrier) t.wait = Wait::kRunnable;
      progress = true;
    }
    if (!progress) {
      std::fprintf(stderr, "emu: deadlock (%d done, %d at a barrier, of %d threads; spinning "
                           "threads count as waiting)\n", done, at_barrier, n);
      std::abort();
    }
  }
}

}  // namespace

ThreadState& Current() { return g_cta && g_cta->current >= 0 ? Self().state : g_host_state; }

unsigned char* DynamicSmem() { return g_cta->smem.data(); }

void SyncThreads() { Block(Wait::kBarrier); }

float ShflXor(float v, int lane_mask) {
  Thread& t = Self();
  t.coll = Coll::kShfl;
  t.shfl_in = v;
  t.shfl_mask = lane_mask;
  Block(Wait::kCollective);
  return Self().shfl_out;
}

void MmaBf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  Thread& t = Self();
  t.coll = Coll::kMmaBf16, t.mma_d = d, t.mma_a = a, t.mma_b = b;
  Block(Wait::kCollective);
}

void MmaF16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  Thread& t = Self();
  t.coll = Coll::kMmaF16, t.mma_d = d, t.mma_a = a, t.mma_b = b;
  Block(Wait::kCollective);
}

void LdMatrix(uint32_t (&r)[4], const void* row_addr, bool trans) {
  Thread& t = Self();
  t.coll = trans ? Coll::kLdMatrixTrans : Coll::kLdMatrix, t.ld_addr = row_addr, t.ld_out = r;
  Block(Wait::kCollective);
}

// ---- mbarrier and TMA -------------------------------------------------------------------
namespace {

MbarState& Mbar(const void* bar) {
  const size_t off = SmemAddress(bar);
  if (off % 8 != 0) {
    std::fprintf(stderr, "emu: mbarrier at shared byte %zu is not 8-byte aligned\n", off);
    std::abort();
  }
  auto it = g_cta->mbar.find(off);
  if (it == g_cta->mbar.end()) {
    std::fprintf(stderr, "emu: mbarrier at shared byte %zu used before mbarrier.init\n", off);
    std::abort();
  }
  return it->second;
}

void MaybeCompletePhase(MbarState& m) {
  if (m.pending == 0 && m.tx == 0) {
    m.phase ^= 1;
    m.pending = m.count;
  }
}

}  // namespace

void MbarInit(void* bar, int count) {
  g_cta->mbar[SmemAddress(bar)] = MbarState{count, count, 0, 0};
}

void MbarArriveExpectTx(void* bar, uint32_t bytes) {
  MbarState& m = Mbar(bar);
  m.tx += bytes;
  --m.pending;
  MaybeCompletePhase(m);
}

void MbarArrive(void* bar) {
  MbarState& m = Mbar(bar);
  --m.pending;
  MaybeCompletePhase(m);
}

bool MbarTryWait(void* bar, int parity) { return Mbar(bar).phase != parity; }

void Yield() {
  Thread& t = Self();
  t.wait = Wait::kYield;
  swapcontext(&t.ctx, &g_cta->scheduler);
  t.wait = Wait::kRunnable;
}

void TmaLoad2d(void* smem_dst, const TmaDesc2d& d, int x, int y, void* bar) {
  const size_t dst = SmemAddress(smem_dst);
  const size_t row_bytes = static_cast<size_t>(d.box[0]) * d.elem_bytes;
  if (d.swizzle128 && (dst % 1024 != 0 || row_bytes != 128)) {
    std::fprintf(stderr, "emu: a 128-byte-swizzled TMA box needs 128-byte rows at a 1,024-byte boundary\n");
    std::abort();
  }
  const auto* base = static_cast<const unsigned char*>(d.base);
  for (uint32_t r = 0; r < d.box[1]; ++r)
    for (uint32_t c = 0; c < d.box[0]; ++c) {
      const int64_t gx = int64_t{x} + c, gy = int64_t{y} + r;
      size_t off = r * row_bytes + size_t{c} * d.elem_bytes;
      if (d.swizzle128) off ^= ((off >> 7) & 7) << 4;  // chunk ^= row % 8, in the 1 KB atom
      if (dst + off + d.elem_bytes > g_cta->smem.size()) {
        std::fprintf(stderr, "emu: TMA box past the end of shared memory\n");
        std::abort();
      }
      unsigned char* out = g_cta->smem.data() + dst + off;
      if (gx < 0 || gy < 0 || gx >= int64_t(d.dims[0]) || gy >= int64_t(d.dims[1]))
        std::memset(out, 0, d.elem_bytes);  // out of bounds: zero fill, as TMA does
      else
        std::memcpy(out, base + gy * d.row_stride_bytes + gx * d.elem_bytes, d.elem_bytes);
    }
  MbarState& m = Mbar(bar);
  m.tx -= static_cast<int64_t>(row_bytes) * d.box[1];  // the whole box, zero fill included
  MaybeCompletePhase(m);
}

uint32_t SmemAddress(const void* p) {
  const auto* c = static_cast<const unsigned char*>(p);
  const unsigned char* base = g_cta->smem.data();
  if (c < base || c >= base + g_cta->smem.size()) {
    std::fprintf(stderr, "emu: SmemAddress of a pointer outside shared memory\n");
    std::abort();
  }
  return static_cast<uint32_t>(c - base);
}

void Wgmma(float* d, int n, const uint32_t* a, uint64_t desc_a, uint64_t desc_b, bool trans_b,
           bool bf16, bool accumulate, bool trans_a) {
  Thread& t = Self();
  t.coll = Coll::kWgmma;
  t.wgmma = WgmmaOp{d, n, a, desc_a, desc_b, trans_b, bf16, accumulate, trans_a};
  Block(Wait::kCollective);
}

void WgmmaCommit() {
  Self().coll = Coll::kWgmmaCommit;
  Block(Wait::kCollective);
}

void WgmmaWait(int pending) {
  Thread& t = Self();
  t.coll = Coll::kWgmmaWait;
  t.wgmma_pending = pending;
  Block(Wait::kCollective);
}

void Launch(Dim3 grid, int block_threads, size_t smem_bytes, const std::function<void()>& fn) {
  Cta cta;
  cta.fn = &fn;
  cta.threads.resize(block_threads);
  for (auto& t : cta.threads) t.stack.resize(kStackBytes);
  g_cta = &cta;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        cta.smem.assign(smem_bytes, 0);
        cta.mbar.clear();
        cta.wgmma.assign(static_cast<size_t>(block_threads / (4 * kWarp)), WarpgroupQueue{});
        for (int i = 0; i < block_threads; ++i) InitThread(cta.threads[i], i, {x, y, z}, grid);
        RunCta(cta);
      }
  g_cta = nullptr;
}

}  // namespace flashtick::emu
