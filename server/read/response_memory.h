// ResponseMemory: the read service's own admission, which keeps a read
// counted until gRPC is done with its response (written to the client, or
// dropped with the call), and caps the bytes of responses waiting to be
// sent.
//
// The engine's admission (--max_requests) ends when the engine answers, but
// the answer then waits in gRPC until the client reads it; a client that
// never reads would otherwise keep any number of answers in memory. Here:
//   - at most `max_calls` Read calls are between admission and OnDone;
//   - responses built and not yet sent hold at most `max_bytes` together:
//     a new read is refused while there is no room left for one more
//     answer of `admit_room` bytes (the largest answer, max_response_bytes),
//     and an answer that would take the held bytes over the cap all the same
//     (reads admitted earlier) is dropped (RESOURCE_EXHAUSTED) instead of
//     being kept.
//
// Thread safety: safe from any thread; lock-free.
#ifndef TAILGATE_SERVER_READ_RESPONSE_MEMORY_H_
#define TAILGATE_SERVER_READ_RESPONSE_MEMORY_H_

#include <atomic>
#include <cstdint>

namespace tailgate::server {

class ResponseMemory {
 public:
  ResponseMemory(int64_t max_calls, int64_t max_bytes, int64_t admit_room = 0)
      : max_calls_(max_calls), max_bytes_(max_bytes), admit_room_(admit_room) {}
  ResponseMemory(const ResponseMemory&) = delete;
  ResponseMemory& operator=(const ResponseMemory&) = delete;

  enum class Admission { kAdmitted, kTooManyCalls, kBufferFull };
  // On kAdmitted, the call is counted until Done.
  Admission TryAdmit();

  // Reserves `bytes` for an admitted call's response; false (nothing
  // reserved) if that would take the held bytes over the cap.
  bool TryHold(int64_t bytes);

  // The call is over; `held` is what its TryHold reserved (0 if none).
  void Done(int64_t held);

  // Gives back `held` bytes TryHold reserved, the call going on (or held
  // for no call: answers of services other than Read).
  void Unhold(int64_t held);

  int64_t max_bytes() const { return max_bytes_; }
  int64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  int64_t held_bytes() const { return held_.load(std::memory_order_relaxed); }
  int64_t peak_held_bytes() const {
    return peak_held_.load(std::memory_order_relaxed);
  }

 private:
  const int64_t max_calls_;
  const int64_t max_bytes_;
  const int64_t admit_room_;
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> held_{0};
  std::atomic<int64_t> peak_held_{0};
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_RESPONSE_MEMORY_H_
