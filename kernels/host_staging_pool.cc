// Reusable host staging buffers (see host_staging_pool.h).
#include "kernels/host_staging_pool.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

constexpr size_t kMinBuffer = size_t{64} << 10;  // below this, pinning costs more than it saves

// `bytes` rounded up to a power of two (at least kMinBuffer), or `bytes` itself where
// the rounded size would not fit under `cap`.
size_t Rounded(size_t bytes, size_t cap) {
  size_t c = kMinBuffer;
  while (c < bytes && c <= cap / 2) c *= 2;
  return c >= bytes && c <= cap ? c : bytes;
}

}  // namespace

HostStagingPool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      buffer_(std::move(other.buffer_)),
      capacity_(std::exchange(other.capacity_, 0)) {}

HostStagingPool::Lease& HostStagingPool::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Return();
    pool_ = std::exchange(other.pool_, nullptr);
    buffer_ = std::move(other.buffer_);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

HostStagingPool::Lease::~Lease() { Return(); }

void HostStagingPool::Lease::Return() {
  if (pool_ != nullptr && buffer_ != nullptr) pool_->Release({std::move(buffer_), capacity_});
  pool_ = nullptr;
  buffer_.reset();
  capacity_ = 0;
}

HostStagingPool::HostStagingPool(Backend* backend, size_t max_bytes)
    : backend_(backend), max_bytes_(max_bytes) {}

absl::StatusOr<HostStagingPool::Lease> HostStagingPool::Acquire(size_t bytes) {
  Lease lease;
  lease.pool_ = this;
  std::unique_lock<std::mutex> lock(mu_);
  // The smallest free buffer that is large enough.
  auto fit = std::lower_bound(free_.begin(), free_.end(), bytes,
                              [](const Buffer& b, size_t n) { return b.capacity < n; });
  if (fit != free_.end()) {
    lease.buffer_ = std::move(fit->memory);
    lease.capacity_ = fit->capacity;
    free_.erase(fit);
    return lease;
  }
  const size_t size = Rounded(bytes, max_bytes_);
  size_t free_bytes = 0;
  for (const Buffer& b : free_) free_bytes += b.capacity;
  const size_t lent = held_bytes_ - free_bytes;
  if (size > max_bytes_ || lent > max_bytes_ - size) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "host staging: ", bytes, " bytes would pass the pool's cap of ", max_bytes_,
        " bytes (", lent, " lent)"));
  }
  // Room under the cap: drop free buffers (each too small for this request), smallest
  // first; their memory is unpinned after the lock is let go (a system call).
  size_t dropped = 0;
  std::vector<Buffer> to_free;
  while (held_bytes_ - dropped > max_bytes_ - size) {
    dropped += free_.front().capacity;
    to_free.push_back(std::move(free_.front()));
    free_.erase(free_.begin());
  }
  held_bytes_ = held_bytes_ - dropped + size;  // reserved before the slow allocation, outside the lock
  lock.unlock();
  to_free.clear();
  absl::StatusOr<std::shared_ptr<void>> memory = backend_->AllocateHostStaging(size);
  if (!memory.ok()) {
    std::lock_guard<std::mutex> relock(mu_);
    held_bytes_ -= size;
    return memory.status();
  }
  lease.buffer_ = *std::move(memory);
  lease.capacity_ = size;
  return lease;
}

void HostStagingPool::Release(Buffer b) {
  std::lock_guard<std::mutex> lock(mu_);
  auto at = std::lower_bound(free_.begin(), free_.end(), b.capacity,
                             [](const Buffer& x, size_t n) { return x.capacity < n; });
  free_.insert(at, std::move(b));
}

size_t HostStagingPool::held_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_bytes_;
}

size_t HostStagingPool::free_buffers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_.size();
}

}  // namespace flashtick
