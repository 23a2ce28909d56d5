// TcpStore: the rendezvous store's server and client (research/parallel/tcp_store.h).
#include "research/parallel/tcp_store.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace flashtick {
namespace {

enum Op : uint8_t { kSet = 1, kGet = 2, kAdd = 3 };
enum Reply : uint8_t { kOk = 0, kNotFound = 1, kRefused = 2 };
constexpr size_t kRequestHeader = 9, kResponseHeader = 5;

void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

// Far enough to mean "no deadline" for a wait that a stop flag ends.
net::Clock::time_point Forever() { return net::Clock::now() + std::chrono::hours(24 * 365); }

}  // namespace

// ---- server ------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<TcpStoreServer>> TcpStoreServer::Start(
    int port, const TcpStoreLimits& limits) {
  std::unique_ptr<TcpStoreServer> s(new TcpStoreServer(limits));
  ASSIGN_OR_RETURN(s->listener_, net::ListenTcp(port, /*backlog=*/128));
  ASSIGN_OR_RETURN(s->port_, net::LocalPort(s->listener_));
  s->acceptor_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  return s;
}

TcpStoreServer::~TcpStoreServer() {
  stop_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  std::lock_guard<std::mutex> lock(conns_mu_);
  for (auto& c : conns_) {
    c->socket.Shutdown();
    if (c->thread.joinable()) c->thread.join();
  }
}

void TcpStoreServer::AcceptLoop() {
  while (!stop_) {
    absl::StatusOr<net::Socket> s = net::AcceptTcp(listener_, Forever(), &stop_);
    if (!s.ok()) {  // stopped, or a failed accept (out of descriptors): not a busy loop
      if (!absl::IsCancelled(s.status()))
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    std::lock_guard<std::mutex> lock(conns_mu_);
    for (auto it = conns_.begin(); it != conns_.end();) {  // reap finished connections
      if ((*it)->done) {
        (*it)->thread.join();
        it = conns_.erase(it);
      } else {
        ++it;
      }
    }
    if (active_.load() >= limits_.max_connections) continue;  // refused: closed at once
    auto c = std::make_unique<Connection>();
    c->socket = *std::move(s);
    ++active_;
    Connection* raw = c.get();
    c->thread = std::thread([this, raw] { Serve(raw); });
    conns_.push_back(std::move(c));
  }
}

void TcpStoreServer::Serve(Connection* c) {
  const std::string peer = "a store client";
  const auto frame = net::Seconds(limits_.frame_timeout_seconds);
  for (;;) {
    // Idle clients may wait as long as they like; a started request must finish.
    if (!net::WaitReadable(c->socket, Forever(), &stop_).ok()) break;
    char head[kRequestHeader];
    if (!net::RecvAll(c->socket, head, sizeof(head), net::Clock::now() + frame, peer).ok()) break;
    const uint8_t op = static_cast<uint8_t>(head[0]);
    const uint32_t key_bytes = GetU32(head + 1), value_bytes = GetU32(head + 5);
    uint8_t status = kOk;
    std::string payload;
    bool close_after = false;
    if (key_bytes > limits_.max_key_bytes || value_bytes > limits_.max_value_bytes) {
      // Refused unread: the connection cannot be resynchronised, so it ends after.
      status = kRefused;
      payload = absl::StrCat("store refuses a ", key_bytes, "-byte key or ", value_bytes,
                             "-byte value (limits ", limits_.max_key_bytes, " and ",
                             limits_.max_value_bytes, " bytes)");
      close_after = true;
    } else {
      std::string key(key_bytes, '\0'), value(value_bytes, '\0');
      if (!net::RecvAll(c->socket, key.data(), key.size(), net::Clock::now() + frame, peer).ok() ||
          !net::RecvAll(c->socket, value.data(), value.size(), net::Clock::now() + frame, peer)
               .ok())
        break;
      absl::Status s = Handle(op, key, value, &status, &payload);
      if (!s.ok()) {
        status = kRefused;
        payload = std::string(s.message());
      }
    }
    std::string out(kResponseHeader, '\0');
    out[0] = static_cast<char>(status);
    PutU32(out.data() + 1, static_cast<uint32_t>(payload.size()));
    out += payload;
    if (!net::SendAll(c->socket, out.data(), out.size(), net::Clock::now() + frame, peer).ok() ||
        close_after)
      break;
  }
  c->socket.Shutdown();
  --active_;
  c->done = true;
}

absl::Status TcpStoreServer::Handle(uint8_t op, const std::string& key, const std::string& value,
                                    uint8_t* status, std::string* payload) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = data_.find(key);
  const bool is_new = it == data_.end();
  if ((op == kSet || op == kAdd) && is_new &&
      static_cast<int64_t>(data_.size()) >= limits_.max_keys)
    return absl::ResourceExhaustedError(
        absl::StrCat("store is full (", limits_.max_keys, " keys); refusing key '", key, "'"));
  switch (op) {
    case kSet:
      data_[key] = value;
      return absl::OkStatus();
    case kGet:
      if (is_new) {
        *status = kNotFound;
      } else {
        *payload = it->second;
      }
      return absl::OkStatus();
    case kAdd: {
      int64_t delta = 0, current = 0;
      if (!absl::SimpleAtoi(value, &delta))
        return absl::InvalidArgumentError(absl::StrCat("Add: '", value, "' is not an integer"));
      if (!is_new && !absl::SimpleAtoi(it->second, &current))
        return absl::InvalidArgumentError(absl::StrCat("Add: key '", key, "' holds no integer"));
      *payload = absl::StrCat(current + delta);
      data_[key] = *payload;
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown store op ", op));
  }
}

// ---- client ------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<TcpStore>> TcpStore::Create(const TcpStoreOptions& options) {
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size)
    return absl::InvalidArgumentError(absl::StrCat(
        "store: rank ", options.rank, " not in [0, world size ", options.world_size, ")"));
  if (options.rank != 0 && options.port == 0)
    return absl::InvalidArgumentError(
        "store: port 0 lets rank 0 pick one; the other ranks need the port it picked");
  std::unique_ptr<TcpStore> store(new TcpStore(options));
  store->port_ = options.port;
  if (options.rank == 0) {
    ASSIGN_OR_RETURN(store->server_, TcpStoreServer::Start(options.port, options.limits));
    store->port_ = store->server_->port();
  }
  store->peer_ = absl::StrCat("rank 0 (the store at ", options.host, ":", store->port_, ")");
  ASSIGN_OR_RETURN(
      store->socket_,
      net::ConnectTcp(options.host, store->port_,
                      net::Clock::now() + net::Seconds(options.timeout_seconds), store->peer_));
  return store;
}

absl::StatusOr<std::string> TcpStore::Call(uint8_t op, absl::string_view key,
                                           absl::string_view value, bool* found) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!broken_.ok()) return broken_;
  absl::StatusOr<std::string> out = RoundTrip(op, key, value, found);
  // A request cut off midway leaves the stream out of step: no later call may use it.
  if (!out.ok() && !absl::IsInvalidArgument(out.status())) broken_ = out.status();
  return out;
}

absl::StatusOr<std::string> TcpStore::RoundTrip(uint8_t op, absl::string_view key,
                                                absl::string_view value, bool* found) {
  const auto deadline = net::Clock::now() + net::Seconds(options_.timeout_seconds);
  std::string req(kRequestHeader, '\0');
  req[0] = static_cast<char>(op);
  PutU32(req.data() + 1, static_cast<uint32_t>(key.size()));
  PutU32(req.data() + 5, static_cast<uint32_t>(value.size()));
  absl::StrAppend(&req, key, value);
  RETURN_IF_ERROR(net::SendAll(socket_, req.data(), req.size(), deadline, peer_));
  char head[kResponseHeader];
  RETURN_IF_ERROR(net::RecvAll(socket_, head, sizeof(head), deadline, peer_));
  const uint32_t n = GetU32(head + 1);
  if (n > options_.limits.max_value_bytes + 4096u)
    return absl::DataLossError(absl::StrCat(peer_, " sent a ", n, "-byte reply"));
  std::string payload(n, '\0');
  RETURN_IF_ERROR(net::RecvAll(socket_, payload.data(), n, deadline, peer_));
  switch (static_cast<uint8_t>(head[0])) {
    case kOk:
      if (found != nullptr) *found = true;
      return payload;
    case kNotFound:
      if (found != nullptr) *found = false;
      return std::string();
    default:
      return absl::InvalidArgumentError(absl::StrCat("the store refused: ", payload));
  }
}

absl::Status TcpStore::Set(absl::string_view key, absl::string_view value) {
  if (value.size() > options_.limits.max_value_bytes || key.size() > options_.limits.max_key_bytes)
    return absl::InvalidArgumentError(absl::StrCat(
        "store: a ", key.size(), "-byte key or ", value.size(), "-byte value is over the limits (",
        options_.limits.max_key_bytes, " and ", options_.limits.max_value_bytes, " bytes)"));
  return Call(kSet, key, value, nullptr).status();
}

absl::StatusOr<bool> TcpStore::Check(absl::string_view key) {
  bool found = false;
  RETURN_IF_ERROR(Call(kGet, key, "", &found).status());
  return found;
}

absl::StatusOr<std::string> TcpStore::Get(absl::string_view key) {
  return Get(key, options_.timeout_seconds);
}

absl::StatusOr<std::string> TcpStore::Get(absl::string_view key, double timeout_seconds) {
  const auto start = net::Clock::now();
  const auto deadline = start + net::Seconds(timeout_seconds);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    bool found = false;
    ASSIGN_OR_RETURN(std::string v, Call(kGet, key, "", &found));
    if (found) return v;
    if (net::Clock::now() >= deadline)
      return absl::DeadlineExceededError(
          absl::StrCat("store: key '", key, "' not set after ", timeout_seconds, " s"));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

absl::StatusOr<int64_t> TcpStore::Add(absl::string_view key, int64_t delta) {
  ASSIGN_OR_RETURN(std::string v, Call(kAdd, key, absl::StrCat(delta), nullptr));
  int64_t out = 0;
  if (!absl::SimpleAtoi(v, &out))
    return absl::DataLossError(absl::StrCat("store: Add returned '", v, "'"));
  return out;
}

absl::Status TcpStore::Barrier(absl::string_view name) {
  const int W = world_size();
  RETURN_IF_ERROR(Set(absl::StrCat(name, "/", rank()), "1"));
  const auto deadline = net::Clock::now() + net::Seconds(options_.timeout_seconds);
  auto pause = std::chrono::milliseconds(1);
  std::vector<bool> joined(W, false);
  for (;;) {
    std::vector<int> missing;
    for (int r = 0; r < W; ++r) {
      if (!joined[r]) {
        ASSIGN_OR_RETURN(bool here, Check(absl::StrCat(name, "/", r)));
        joined[r] = here;
      }
      if (!joined[r]) missing.push_back(r);
    }
    if (missing.empty()) return absl::OkStatus();
    if (net::Clock::now() >= deadline)
      return absl::DeadlineExceededError(absl::StrCat(
          name, " timed out after ", options_.timeout_seconds, " s: ", W - missing.size(), " of ",
          W, " ranks joined (missing: ", absl::StrJoin(missing, ", "), ")"));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

}  // namespace flashtick
