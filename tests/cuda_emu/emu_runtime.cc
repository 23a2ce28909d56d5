// The emulator's scheduler and collectives (see emu_intrinsics.h). One CTA at a time:
// every thread is a ucontext coroutine; a pass resumes each runnable thread until it
// blocks (collective, barrier or exit), then completes every warp whose 32 lanes wait
// on the same collective and releases the barrier once every live thread waits on it.
// A pass with no progress is a deadlock (e.g. a barrier inside divergent code) and
// aborts with a message.
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/common/half.h"
#include "tests/cuda_emu/emu_intrinsics.h"

namespace flashtick::emu {
namespace {

constexpr int kWarp = 32;
constexpr size_t kStackBytes = 256 * 1024;

enum class Wait { kRunnable, kCollective, kBarrier, kDone };
enum class Coll { kNone, kShfl, kMmaBf16, kMmaF16, kLdMatrix, kLdMatrixTrans };

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
};

struct Cta {
  std::vector<Thread> threads;
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

float ElemToFloat(Coll kind, uint16_t bits) {
  return kind == Coll::kMmaBf16 ? Bf16BitsToFloat(bits) : HalfBitsToFloat(bits);
}

// Element (row, col) of the A (16×16), B (16×8 as k×n) fragments from lane registers.
float FragA(Coll kind, Thread* lanes, int row, int col) {
  const int g = row % 8, t = (col % 8) / 2, reg = (row / 8) + 2 * (col / 8);
  const uint32_t v = lanes[g * 4 + t].mma_a[reg];
  return ElemToFloat(kind, static_cast<uint16_t>(col % 2 ? v >> 16 : v & 0xffff));
}

float FragB(Coll kind, Thread* lanes, int k, int n) {
  const int t = (k % 8) / 2, reg = k / 8;
  const uint32_t v = lanes[n * 4 + t].mma_b[reg];
  return ElemToFloat(kind, static_cast<uint16_t>(k % 2 ? v >> 16 : v & 0xffff));
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

// Completes warp w's collective if all its lanes wait on one. Returns true if it ran.
bool TryCollective(Thread* lanes) {
  for (int l = 0; l < kWarp; ++l)
    if (lanes[l].wait != Wait::kCollective) return false;
  const Coll kind = lanes[0].coll;
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
      if (cta.threads[i].wait != Wait::kRunnable) continue;
      cta.current = i;
      swapcontext(&cta.scheduler, &cta.threads[i].ctx);
      progress = true;
    }
    cta.current = -1;
    for (int w = 0; w * kWarp < n; ++w) progress |= TryCollective(&cta.threads[w * kWarp]);
    int done = 0, at_barrier = 0;
    for (auto& t : cta.threads) done += t.wait == Wait::kDone, at_barrier += t.wait == Wait::kBarrier;
    if (done == n) return;
    if (at_barrier > 0 && at_barrier + done == n) {
      for (auto& t : cta.threads)
        if (t.wait == Wait::kBarrier) t.wait = Wait::kRunnable;
      progress = true;
    }
    if (!progress) {
      std::fprintf(stderr, "emu: deadlock (%d done, %d at a barrier, of %d threads)\n", done, at_barrier, n);
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
        for (int i = 0; i < block_threads; ++i) InitThread(cta.threads[i], i, {x, y, z}, grid);
        RunCta(cta);
      }
  g_cta = nullptr;
}

}  // namespace flashtick::emu
