// Client: reads through the Tailgate sidecar (tailgate.v1.HedgedRead).
//
// A Client sends one read descriptor per call and returns the upstream HTTP
// answer with the trace of how the sidecar obtained it. gRPC types stay out
// of this header: requests and responses are plain structs, durations are
// absl::Duration, and a failed call is an absl::Status carrying the gRPC code
// and message unchanged (see proto/tailgate/v1/tailgate.proto for what each
// code means).
//
// Example:
//   absl::StatusOr<std::unique_ptr<tailgate::Client>> client =
//       tailgate::Client::Connect("127.0.0.1:8080");
//   if (!client.ok()) return client.status();
//   tailgate::ReadRequest request;
//   request.path = "/users/42";
//   request.deadline = absl::Milliseconds(250);
//   absl::StatusOr<tailgate::ReadResponse> response = (*client)->Read(request);
//   if (!response.ok()) return response.status();  // e.g. DEADLINE_EXCEEDED
//   if (response->status >= 500) ...;               // an upstream answer
//
// A multi-get is one ReadMany call: the sidecar hedges each read on its own
// and the items arrive as the reads complete:
//   tailgate::ReadManyRequest batch;
//   for (const std::string& key : keys) {
//     batch.reads.emplace_back().path = key;
//   }
//   absl::Status status = (*client)->ReadMany(
//       batch, [&](tailgate::ReadManyItem item) {
//         if (item.response.ok()) Use(item.index, item.response->body);
//       });
//   // status: OK once every read had its item (each item OK or not).
//
// Thread safety: a Client is safe to use from any thread, concurrently.
// ReadAsync callbacks run on a gRPC thread: they must not block (and must not
// call Read, which blocks). ReadMany item callbacks run on the thread that
// called ReadMany.

#ifndef TAILGATE_CLIENT_CLIENT_H_
#define TAILGATE_CLIENT_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tailgate {

enum class Method { kGet, kHead };

// One HTTP header field.
struct Header {
  std::string name;
  std::string value;

  bool operator==(const Header& other) const {
    return name == other.name && value == other.value;
  }
};

// A read descriptor (tailgate.v1.ReadRequest) plus the call's deadline.
struct ReadRequest {
  // Origin-form target, "/p/a%2Fb?q=1"; sent byte for byte.
  std::string path;
  Method method = Method::kGet;
  std::vector<Header> headers;
  // Replica set; empty selects the sidecar's default set.
  std::string upstream;
  // The tenant the read is done for (ReadRequest.tenant); empty for none.
  std::string tenant;
  // No speculative hedge for this read (a failed primary may still fall
  // back to another replica).
  bool disable_hedge = false;
  // Hedge delay for this read; zero uses the sidecar's --hedge_delay.
  // REQUIRES: finite.
  absl::Duration hedge_delay = absl::ZeroDuration();
  // Deadline of the call, from when it starts; zero uses
  // ClientOptions::default_deadline, absl::InfiniteDuration() sets none (the
  // sidecar's --timeout still caps the read).
  absl::Duration deadline = absl::ZeroDuration();
};

// How the sidecar obtained the answer (tailgate.v1.ReadTrace).
struct ReadTrace {
  uint32_t attempts = 0;   // 1 or 2
  bool hedged = false;     // an extra attempt was launched
  bool hedge_won = false;  // the extra attempt answered
  std::string replica;     // configured URL of the replica that answered
  absl::Duration latency = absl::ZeroDuration();  // measured by the sidecar
};

// An upstream HTTP answer, whatever its status (tailgate.v1.ReadResponse).
struct ReadResponse {
  int status = 0;
  std::vector<Header> headers;
  std::string body;  // binary; empty for HEAD
  ReadTrace trace;
};

// Cancels a blocking call from any thread (ReadMany; its own item callback
// included). Cancelling is for good: a call started with an already
// cancelled Cancellation fails at once with CANCELLED, without sending.
//
// Thread safety: Cancel and cancelled from any thread, concurrently. A
// Cancellation must outlive the calls it is given to.
class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Cancels the call running with this Cancellation, if any (it returns
  // CANCELLED soon after), and every later one. Idempotent.
  void Cancel();
  bool cancelled() const;

  // Used by the Client around a call: Attach returns false (and attaches
  // nothing) when already cancelled; otherwise `cancel_call` runs, under
  // this object's lock, if Cancel comes before Detach.
  bool Attach(absl::AnyInvocable<void()> cancel_call);
  void Detach();

 private:
  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  absl::AnyInvocable<void()> cancel_call_ ABSL_GUARDED_BY(mu_);
};

// Many read descriptors sent as one call (tailgate.v1.ReadManyRequest).
struct ReadManyRequest {
  // At most the sidecar's --max_batch_reads (1000 by default); more fails
  // the call with INVALID_ARGUMENT. Each read's own `deadline` is unused:
  // the call's deadline bounds every read.
  std::vector<ReadRequest> reads;
  // How many of the reads the sidecar runs at once; 0: as many as its
  // admission allows.
  uint32_t max_in_flight = 0;
  // Deadline of the whole call, from when it starts; zero uses
  // ClientOptions::default_deadline, absl::InfiniteDuration() sets none
  // (the sidecar's --timeout still caps each read).
  absl::Duration deadline = absl::ZeroDuration();
  // Optional; Cancel ends the call, and the sidecar cancels the reads still
  // running. Not owned.
  Cancellation* cancellation = nullptr;
};

// One read of a ReadMany, as it completed.
struct ReadManyItem {
  // Position of the read in ReadManyRequest::reads.
  size_t index = 0;
  // What Read would have returned for it: an upstream answer (any HTTP
  // status), or the read's own error (NOT_FOUND for an unknown upstream,
  // INVALID_ARGUMENT for a bad path, ...), code and message unchanged.
  absl::StatusOr<ReadResponse> response;
};

struct ClientOptions {
  // Deadline of a call that sets none of its own.
  absl::Duration default_deadline = absl::Seconds(5);
  // Positive: Connect waits this long for the channel to be ready and fails
  // with UNAVAILABLE otherwise. Zero: Connect does not wait; the first call
  // connects (and fails with UNAVAILABLE if it cannot).
  absl::Duration connect_timeout = absl::ZeroDuration();
  // Largest response message accepted. gRPC's own default (4 MiB) is below
  // the sidecar's default --max_response_bytes plus headers; this default
  // covers its 64 MiB hard cap.
  int max_receive_message_bytes = 80 << 20;
  // gRPC lets channels to the same target with the same arguments share a
  // connection. True: this client's calls get a connection of their own,
  // so another client's traffic (say, another tenant's flood) shares no
  // HTTP/2 stream limit or flow-control window with them.
  bool own_connection = false;
};

class Client {
 public:
  using ReadCallback =
      absl::AnyInvocable<void(absl::StatusOr<ReadResponse>) &&>;
  using ReadManyCallback = absl::FunctionRef<void(ReadManyItem)>;

  // Opens an insecure channel to the sidecar's main listener: `target` is
  // "host:port", "[ipv6]:port", "unix:/path" or any other gRPC target URI.
  // INVALID_ARGUMENT for an empty target; UNAVAILABLE when
  // options.connect_timeout is positive and passes.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(
      absl::string_view target, const ClientOptions& options = {});

  // Cancels the ReadAsync reads still in flight (their callbacks get
  // CANCELLED) and waits until every ReadAsync callback has returned.
  // REQUIRES: not called from a ReadAsync callback of this Client, and no
  // blocking Read or ReadMany is still running on another thread.
  virtual ~Client() = default;

  // Performs one read and blocks until it is over. An upstream answer of any
  // HTTP status is OK; a non-OK status has the gRPC call's code and message.
  virtual absl::StatusOr<ReadResponse> Read(const ReadRequest& request) = 0;

  // Starts one read and returns at once; `done` runs exactly once, with what
  // Read would have returned, on a gRPC thread. A request rejected before it
  // is sent (INVALID_ARGUMENT) runs `done` on the calling thread.
  virtual void ReadAsync(const ReadRequest& request, ReadCallback done) = 0;

  // Performs the reads of `request` as one call and blocks until it is
  // over, calling `on_item` once per read that completed, in the order they
  // completed, on the calling thread, one at a time. `on_item` may block,
  // but the sidecar holds an item at most its --send_timeout: a callback
  // slower than that makes it end the call.
  // Returns the call's status: OK once every read had its item (whether
  // the item is OK or not); otherwise the reads without an item did not
  // complete, and the status says why: DEADLINE_EXCEEDED (the call's
  // deadline), CANCELLED (request.cancellation), INVALID_ARGUMENT (more
  // reads than --max_batch_reads, or a read rejected before sending, such
  // as an infinite hedge_delay, with its index named), UNAVAILABLE, and
  // INTERNAL for an item whose index is not one of the request's reads.
  virtual absl::Status ReadMany(const ReadManyRequest& request,
                                ReadManyCallback on_item) = 0;
};

}  // namespace tailgate

#endif  // TAILGATE_CLIENT_CLIENT_H_
