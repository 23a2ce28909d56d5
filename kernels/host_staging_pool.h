// HostStagingPool: reusable host buffers from Backend::AllocateHostStaging (page-locked
// on CUDA) for transfers too large or too varied in size for one fixed staging block,
// such as a merged batch of requests that a server stacks before one forward.
//
// Why: an upload from pageable memory goes through the driver's own pinned bounce
// buffers, a second host copy at a fraction of the link's bandwidth; from page-locked
// memory it is one DMA (CUDA C++ Programming Guide, "Page-Locked Host Memory"). So a
// caller that must copy the bytes anyway (stacking several requests into one batch)
// copies them straight into a staging buffer. Pinning is a slow system call, so the
// buffers are kept and reused; page-locked memory is taken from the host's RAM, so the
// bytes kept are capped, and past the cap Acquire says so and the caller uses ordinary
// memory (a slower copy, the same answer).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace flashtick {

class HostStagingPool {
 public:
  // A buffer on loan: at least the bytes asked for, returned to the pool when the
  // lease is destroyed. Move-only; the pool must outlive it.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    void* data() const { return buffer_.get(); }
    size_t capacity() const { return capacity_; }

   private:
    friend class HostStagingPool;
    void Return();
    HostStagingPool* pool_ = nullptr;
    std::shared_ptr<void> buffer_;
    size_t capacity_ = 0;
  };

  // `max_bytes`: the most staging memory the pool holds at once, lent and free together.
  HostStagingPool(Backend* backend, size_t max_bytes);

  // A buffer of at least `bytes`: a free one if one is large enough (the smallest such),
  // else a new one of `bytes` rounded up to a power of two (so a stream of slowly
  // growing batches allocates a few times, not every time). Free buffers are dropped,
  // smallest first, to make room under the cap. RESOURCE_EXHAUSTED when the lent
  // buffers leave no room; the error of AllocateHostStaging when it fails.
  absl::StatusOr<Lease> Acquire(size_t bytes);

  size_t held_bytes() const;  // lent and free
  size_t free_buffers() const;

 private:
  struct Buffer {
    std::shared_ptr<void> memory;
    size_t capacity = 0;
  };
  void Release(Buffer b);

  Backend* const backend_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::vector<Buffer> free_;  // by capacity, ascending
  size_t held_bytes_ = 0;
};

}  // namespace flashtick
