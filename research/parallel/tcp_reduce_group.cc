// TcpReduceGroup: mesh set-up and the sliced rank-order sum over TCP
// (research/parallel/tcp_reduce_group.h).
#include "research/parallel/tcp_reduce_group.h"

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace flashtick {
namespace {

std::string RankName(int r) { return absl::StrCat("rank ", r); }

// What every rank must agree on before a sum: the same call, count and dtype.
struct CallHeader {
  uint32_t magic = 0x46545253;  // "FTRS"
  uint32_t dtype = 0;
  int64_t count = 0;
  int64_t call = 0;
};
static_assert(sizeof(CallHeader) == 24, "the header is sent as raw bytes");

}  // namespace

absl::StatusOr<std::unique_ptr<TcpReduceGroup>> TcpReduceGroup::Create(
    TcpStore& store, double stall_timeout_seconds, absl::string_view key_prefix) {
  const int rank = store.rank(), W = store.world_size();
  std::unique_ptr<TcpReduceGroup> g(new TcpReduceGroup(rank, W, stall_timeout_seconds));
  if (W == 1) return g;
  const double timeout_seconds = store.timeout_seconds();
  const auto deadline = net::Clock::now() + net::Seconds(timeout_seconds);
  ASSIGN_OR_RETURN(net::Socket listener, net::ListenTcp(0, /*backlog=*/W));
  ASSIGN_OR_RETURN(int port, net::LocalPort(listener));
  // The interface this host reaches rank 0 through is the one the others reach us by.
  ASSIGN_OR_RETURN(std::string addr, net::LocalAddress(store.socket()));
  RETURN_IF_ERROR(
      store.Set(absl::StrCat(key_prefix, "mesh/", rank), absl::StrCat(addr, ":", port)));
  for (int r = 0; r < rank; ++r) {
    ASSIGN_OR_RETURN(std::string where,
                     store.Get(absl::StrCat(key_prefix, "mesh/", r), timeout_seconds));
    std::vector<std::string> parts = absl::StrSplit(where, ':');
    int peer_port = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &peer_port))
      return absl::DataLossError(absl::StrCat("mesh address of rank ", r, ": '", where, "'"));
    ASSIGN_OR_RETURN(g->peers_[r], net::ConnectTcp(parts[0], peer_port, deadline, RankName(r)));
    const int32_t hello = rank;
    RETURN_IF_ERROR(net::SendAll(g->peers_[r], &hello, sizeof(hello), deadline, RankName(r)));
  }
  for (int k = rank + 1; k < W; ++k) {
    absl::StatusOr<net::Socket> s = net::AcceptTcp(listener, deadline);
    if (!s.ok())
      return absl::Status(s.status().code(),
                          absl::StrCat("all-reduce mesh: rank ", rank, " waited for ", W - k,
                                       " higher rank(s) to connect: ", s.status().message()));
    int32_t hello = -1;
    RETURN_IF_ERROR(net::RecvAll(*s, &hello, sizeof(hello), deadline, "a mesh peer"));
    if (hello <= rank || hello >= W || g->peers_[hello].valid())
      return absl::DataLossError(
          absl::StrCat("all-reduce mesh: rank ", rank, " got a connection claiming rank ", hello));
    g->peers_[hello] = *std::move(s);
  }
  return g;
}

absl::Status TcpReduceGroup::AllReduceSum(int rank, void* data, int64_t count, DType dtype) {
  if (rank != rank_)
    return absl::InvalidArgumentError(
        absl::StrCat("TCP all-reduce: this process is rank ", rank_, ", called as rank ", rank));
  if (dtype != DType::kF32 && dtype != DType::kF64)
    return absl::InvalidArgumentError(
        absl::StrCat("host all-reduce sums fp32 or fp64, got ", DTypeName(dtype)));
  if (aborted_) return absl::AbortedError("all-reduce group aborted: another replica failed");
  const int64_t call = calls_++;
  if (world_size_ == 1) return absl::OkStatus();
  // Header round: a rank that disagrees is a bug in the caller, not a sum to attempt.
  CallHeader mine;
  mine.dtype = static_cast<uint32_t>(dtype);
  mine.count = count;
  mine.call = call;
  std::vector<CallHeader> theirs(world_size_);
  std::vector<net::PeerTransfer> io;
  for (int r = 0; r < world_size_; ++r) {
    if (r == rank_) continue;
    io.push_back({&peers_[r], RankName(r), reinterpret_cast<const char*>(&mine), sizeof(mine),
                  reinterpret_cast<char*>(&theirs[r]), sizeof(CallHeader)});
  }
  RETURN_IF_ERROR(net::ExchangeAll(io, net::Seconds(timeout_seconds_), &aborted_));
  for (int r = 0; r < world_size_; ++r) {
    if (r == rank_) continue;
    const CallHeader& h = theirs[r];
    if (h.magic != mine.magic || h.dtype != mine.dtype || h.count != mine.count ||
        h.call != mine.call)
      return absl::InternalError(absl::StrCat(
          "TCP all-reduce: rank ", r, " is at call ", h.call, " summing ", h.count,
          " values of dtype ", h.dtype, "; rank ", rank_, " is at call ", call, " with ", count,
          " values of dtype ", mine.dtype, " (the replicas diverged)"));
  }
  if (dtype == DType::kF32) return ReduceScatterAllGather(static_cast<float*>(data), count);
  return ReduceScatterAllGather(static_cast<double*>(data), count);
}

template <typename T>
absl::Status TcpReduceGroup::ReduceScatterAllGather(T* data, int64_t count) {
  const int W = world_size_;
  auto begin = [&](int r) { return count * r / W; };
  const int64_t lo = begin(rank_), n = begin(rank_ + 1) - lo;
  // Reduce-scatter: my slice from every rank, into scratch (rank r at r·n).
  scratch_.resize(static_cast<size_t>(W * n) * sizeof(T));
  T* got = reinterpret_cast<T*>(scratch_.data());
  std::vector<net::PeerTransfer> io;
  for (int r = 0; r < W; ++r) {
    if (r == rank_) continue;
    const int64_t rlo = begin(r), rn = begin(r + 1) - rlo;
    io.push_back({&peers_[r], RankName(r), reinterpret_cast<const char*>(data + rlo),
                  static_cast<size_t>(rn) * sizeof(T), reinterpret_cast<char*>(got + r * n),
                  static_cast<size_t>(n) * sizeof(T)});
  }
  RETURN_IF_ERROR(net::ExchangeAll(io, net::Seconds(timeout_seconds_), &aborted_));
  // Rank-order fp64 sums, as HostReduceGroup's SumSlice.
  if (n > 0) std::memcpy(got + rank_ * n, data + lo, static_cast<size_t>(n) * sizeof(T));
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int r = 0; r < W; ++r) s += got[r * n + i];
    data[lo + i] = static_cast<T>(s);
  }
  // All-gather: my summed slice to every rank, theirs into place.
  io.clear();
  for (int r = 0; r < W; ++r) {
    if (r == rank_) continue;
    const int64_t rlo = begin(r), rn = begin(r + 1) - rlo;
    io.push_back({&peers_[r], RankName(r), reinterpret_cast<const char*>(data + lo),
                  static_cast<size_t>(n) * sizeof(T), reinterpret_cast<char*>(data + rlo),
                  static_cast<size_t>(rn) * sizeof(T)});
  }
  return net::ExchangeAll(io, net::Seconds(timeout_seconds_), &aborted_);
}

}  // namespace flashtick
