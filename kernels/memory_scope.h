// MemoryScope: the memory one piece of work (a server request, a stream tick)
// allocates itself on one backend, counted apart from everything else on that
// backend. The backend-wide used/peak (Backend::Memory) mixes every thread's work;
// a scope sees only the allocations made on the thread that opened it, while it
// is open, so concurrent requests never reset or inflate each other's peak.
//
//   MemoryScope scope(*backend);        // opens on this thread
//   ... run the forward ...
//   scope.peak_bytes();                 // this work's own high-water mark
//
// Each allocation remembers the scopes it was charged to (MemoryCharge), so its
// free is credited to them on whatever thread it happens, even after they close.
// Scopes nest: an allocation counts in every open scope of the same backend on the
// thread (the inner one and its enclosing ones). Open and close a scope on the same
// thread, innermost first (RAII on the stack does both).
//
// Long-lived memory that the work only reuses (the model's cached activation
// workspace) is allocated under UnscopedAllocations, so no request owns it, and each
// use is counted with BorrowedMemory: a request's peak then holds the part of the
// workspace it used, whether or not it was the one that grew it.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/backend.h"

namespace flashtick {

namespace memory_scope_internal {
struct Node;  // one open scope's counters; shared with the charges made to it
}  // namespace memory_scope_internal

class MemoryScope {
 public:
  explicit MemoryScope(const Backend& backend);
  ~MemoryScope();
  MemoryScope(const MemoryScope&) = delete;
  MemoryScope& operator=(const MemoryScope&) = delete;

  // Bytes this scope's allocations hold now, and their high-water mark since it opened.
  // Memory allocated before the scope opened (weights, caches) is in neither.
  int64_t used_bytes() const;
  int64_t peak_bytes() const;

 private:
  std::shared_ptr<memory_scope_internal::Node> node_;
};

// For allocators: what one allocation owes the scopes open when it was made.
// Charge on the allocating thread with the backend's memory_domain(); keep the
// charge with the allocation and Release it when the allocation is freed (any
// thread). A charge made while no scope of the domain is open costs one
// thread-local read and releases nothing.
class MemoryCharge {
 public:
  MemoryCharge() = default;
  static MemoryCharge Charge(const void* domain, int64_t bytes);
  void Release() const;

 private:
  std::shared_ptr<memory_scope_internal::Node> innermost_;  // innermost scope charged; null: none
  const void* domain_ = nullptr;
  int64_t bytes_ = 0;
};

// Counts `bytes` of memory allocated earlier (a reused workspace) in the calling
// thread's open scopes of `backend` while it lives, as an allocation of that size would.
class BorrowedMemory {
 public:
  BorrowedMemory(const Backend& backend, int64_t bytes);
  ~BorrowedMemory();
  BorrowedMemory(const BorrowedMemory&) = delete;
  BorrowedMemory& operator=(const BorrowedMemory&) = delete;

 private:
  MemoryCharge charge_;
};

// While alive, allocations on the calling thread charge no scope: for memory that
// outlives the work that happens to allocate it and belongs to its owner (a cache).
class UnscopedAllocations {
 public:
  UnscopedAllocations();
  ~UnscopedAllocations();
  UnscopedAllocations(const UnscopedAllocations&) = delete;
  UnscopedAllocations& operator=(const UnscopedAllocations&) = delete;

 private:
  std::shared_ptr<memory_scope_internal::Node> paused_;  // the scopes open before
};

}  // namespace flashtick
