// MemoryScope: a thread-local chain of open scopes, innermost first; each
// allocation charges the scopes of its backend on that chain (see memory_scope.h).
#include "kernels/memory_scope.h"

#include <atomic>
#include <utility>

#include "kernels/common/atomic_max.h"

namespace flashtick {
namespace memory_scope_internal {

struct Node {
  Node(const void* domain, std::shared_ptr<Node> parent)
      : domain(domain), parent(std::move(parent)) {}
  const void* const domain;            // the allocator this scope counts (Backend::memory_domain)
  const std::shared_ptr<Node> parent;  // the enclosing scope on the thread; never changes
  // Atomic: a free on another thread credits used while the owner's thread allocates.
  std::atomic<int64_t> used{0}, peak{0};
};

}  // namespace memory_scope_internal

namespace {

using memory_scope_internal::Node;

// The innermost scope open on this thread (null: none).
thread_local std::shared_ptr<Node> current_scope;

// The first node of `domain` from `node` outward (null: none).
Node* FirstOf(Node* node, const void* domain) {
  while (node != nullptr && node->domain != domain) node = node->parent.get();
  return node;
}

}  // namespace

MemoryScope::MemoryScope(const Backend& backend)
    : node_(std::make_shared<Node>(backend.memory_domain(), current_scope)) {
  current_scope = node_;
}

MemoryScope::~MemoryScope() {
  // Closing out of order (or on another thread) would orphan the inner scopes; RAII
  // on one thread's stack never does. Restore the enclosing scope only when this
  // one is the innermost, so a misuse cannot reopen a closed scope.
  if (current_scope == node_) current_scope = node_->parent;
}

int64_t MemoryScope::used_bytes() const { return node_->used.load(); }
int64_t MemoryScope::peak_bytes() const { return node_->peak.load(); }

MemoryCharge MemoryCharge::Charge(const void* domain, int64_t bytes) {
  MemoryCharge charge;
  // The innermost open scope of `domain`, by its owning pointer: the charge keeps it
  // (and so the chain outward) alive until the free walks the same nodes.
  const std::shared_ptr<Node>* first = &current_scope;
  while (*first != nullptr && (*first)->domain != domain) first = &(*first)->parent;
  if (*first == nullptr) return charge;
  for (Node* n = first->get(); n != nullptr; n = FirstOf(n->parent.get(), domain)) {
    RaiseToAtLeast(n->peak, n->used.fetch_add(bytes) + bytes);
  }
  charge.innermost_ = *first;
  charge.domain_ = domain;
  charge.bytes_ = bytes;
  return charge;
}

void MemoryCharge::Release() const {
  for (Node* n = innermost_.get(); n != nullptr; n = FirstOf(n->parent.get(), domain_)) {
    n->used.fetch_sub(bytes_);
  }
}

BorrowedMemory::BorrowedMemory(const Backend& backend, int64_t bytes)
    : charge_(MemoryCharge::Charge(backend.memory_domain(), bytes)) {}

BorrowedMemory::~BorrowedMemory() { charge_.Release(); }

UnscopedAllocations::UnscopedAllocations() : paused_(std::move(current_scope)) {
  current_scope = nullptr;
}

UnscopedAllocations::~UnscopedAllocations() { current_scope = std::move(paused_); }

}  // namespace flashtick
