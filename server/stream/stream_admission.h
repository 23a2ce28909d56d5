// StreamAdmission: the limits on open tick streams (docs/serving.md) and the reaper
// that ends idle ones.
//   count    at most max_streams open on the server and max_streams_per_client of
//            them per client (server/client_identity.h); the next is refused with
//            RESOURCE_EXHAUSTED before it reads a message;
//   memory   a session reserves, when it opens, what a whole day of it can hold (its
//            feature rows and, in incremental mode, every layer's keys and values at
//            the model's max_steps), against memory_bytes for all sessions together.
//            Reserving the whole day up front means a session that opens is never
//            cut off mid-session for memory another one took;
//   idle     a stream that waits longer than idle_timeout for its client's next
//            message is ended with DEADLINE_EXCEEDED, freeing its slot and memory.
// Thread-safe. The reaper runs on its own thread and only calls IdleStream methods.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace flashtick {

class Metrics;

struct StreamLimits {
  int max_streams = 256;
  int max_streams_per_client = 32;
  absl::Duration idle_timeout = absl::Minutes(10);
  int64_t memory_bytes = int64_t{8} << 30;
};

// An open stream as the reaper sees it. Ref/Unref keep it alive while the reaper
// calls it outside its own lock (the stream may finish on another thread meanwhile).
class IdleStream {
 public:
  virtual void Ref() = 0;
  virtual void Unref() = 0;
  // Ends the stream with `status` if it has waited for its client since before
  // `idle_since`; false when it is busy or active since.
  virtual bool EndIfIdleSince(absl::Time idle_since, const absl::Status& status) = 0;

 protected:
  ~IdleStream() = default;
};

class StreamAdmission {
 public:
  // metrics may be null (tests).
  StreamAdmission(const StreamLimits& limits, Metrics* metrics);
  ~StreamAdmission();  // stops the reaper; every Ticket must be gone
  StreamAdmission(const StreamAdmission&) = delete;
  StreamAdmission& operator=(const StreamAdmission&) = delete;

  // One admitted stream's slot and reserved memory; releases both when destroyed.
  class Ticket {
   public:
    ~Ticket();
    // RESOURCE_EXHAUSTED (what is reserved, the limit, the flag) when `bytes` more
    // would pass memory_bytes; then nothing is reserved. At most once per ticket.
    absl::Status ReserveMemory(int64_t bytes);
    int64_t reserved_bytes() const { return reserved_; }
    const std::string& client() const { return client_; }

   private:
    friend class StreamAdmission;
    Ticket(StreamAdmission* owner, std::string client, IdleStream* stream)
        : owner_(owner), client_(std::move(client)), stream_(stream) {}
    StreamAdmission* owner_;
    std::string client_;
    IdleStream* stream_;
    int64_t reserved_ = 0;
  };

  // A slot for `client`'s new stream, or RESOURCE_EXHAUSTED naming the limit that
  // refused it. `stream` (may be null: no idle reaping) must outlive the ticket.
  absl::StatusOr<std::unique_ptr<Ticket>> Admit(const std::string& client, IdleStream* stream);

  const StreamLimits& limits() const { return limits_; }
  int open_streams() const;
  int64_t reserved_bytes() const;

 private:
  void Release(Ticket* ticket);
  void ReapLoop();

  const StreamLimits limits_;
  Metrics* const metrics_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, int> per_client_;
  std::set<IdleStream*> streams_;
  int open_ = 0;
  int64_t reserved_ = 0;
  std::thread reaper_;
};

}  // namespace flashtick
