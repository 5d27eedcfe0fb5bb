// What a connection may not do for long or for nothing: the frame
// budget's side of nghttp2's callbacks (frame_budget.h: which frame is work
// and which is not, and how a connection that spent its budget is ended)
// and the receive deadline of a call whose request is still arriving. See
// read_door_impl.h.

#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/read_door/read_door_impl.h"

namespace tailgate::server::read_door {
namespace {

// How often the receive deadline is checked while requests arrive: a
// request past it fails within this much more.
constexpr absl::Duration kReceiveSweepPeriod = absl::Seconds(1);

}  // namespace

bool ReadDoor::Impl::Spend(nghttp2_session* session, Connection& connection,
                           const nghttp2_frame_hd& header) {
  FrameBudget& budget = connection.budget;
  const bool ack = (header.flags & NGHTTP2_FLAG_ACK) != 0;
  FrameBudget::Verdict verdict = FrameBudget::Verdict::kOk;
  switch (header.type) {
    case NGHTTP2_HEADERS:       // a stream opened is work (OnBeginHeaders); a
    case NGHTTP2_CONTINUATION:  // block's size is bounded (OnHeader)
      break;
    case NGHTTP2_DATA:
      if (header.length > 0) {
        budget.OnWork();
      } else if ((header.flags & NGHTTP2_FLAG_END_STREAM) == 0) {
        verdict = budget.OnIdleFrame();
      }
      break;
    case NGHTTP2_PING:
      verdict =
          ack ? budget.OnIdleFrame()
              : budget.OnPing(connection.door->core_.engine().clock().Now(),
                              !connection.calls.empty());
      break;
    case NGHTTP2_SETTINGS:
      if (!ack && !connection.settings_seen) {
        connection.settings_seen = true;  // the handshake's
        break;
      }
      verdict = budget.OnIdleFrame();
      break;
    default:  // WINDOW_UPDATE, PRIORITY, RST_STREAM, GOAWAY, unknown types
      verdict = budget.OnIdleFrame();
      break;
  }
  if (verdict == FrameBudget::Verdict::kOk) return true;
  EndForAbuse(session, FrameBudget::DebugData(verdict));
  return false;
}

int ReadDoor::Impl::OnBeginFrame(nghttp2_session* session,
                                 const nghttp2_frame_hd* header,
                                 void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  connection->door->door_thread_.AssertOnOwner();
  return Spend(session, *connection, *header) ? 0
                                              : NGHTTP2_ERR_CALLBACK_FAILURE;
}

void ReadDoor::Impl::EndForAbuse(nghttp2_session* session,
                                 absl::string_view debug_data) {
  nghttp2_submit_goaway(session, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session),
                        NGHTTP2_ENHANCE_YOUR_CALM,
                        reinterpret_cast<const uint8_t*>(debug_data.data()),
                        debug_data.size());
}

void ReadDoor::Impl::ArmReceiveSweep() {
  if (receive_sweep_ == nullptr ||
      event_pending(receive_sweep_, EV_TIMEOUT, nullptr) != 0) {
    return;
  }
  const timeval period = absl::ToTimeval(kReceiveSweepPeriod);
  evtimer_add(receive_sweep_, &period);
}

void ReadDoor::Impl::OnReceiveSweep(evutil_socket_t, short,
                                    void* arg) noexcept {
  auto* self = static_cast<Impl*>(arg);
  self->door_thread_.AssertOnOwner();
  const absl::Time now = self->core_.engine().clock().Now();
  std::vector<Call*> late;
  bool arriving = false;
  for (const auto& [key, connection] : self->connections_) {
    for (Call* call : connection->calls) {
      if (call->service != nullptr || call->state != Call::State::kReceiving) {
        continue;
      }
      absl::Duration allowed = self->options_.receive_timeout;
      if (call->timeout.has_value())
        allowed = std::min(allowed, *call->timeout);
      if (now - call->begun >= allowed) {
        late.push_back(call);
      } else {
        arriving = true;
      }
    }
  }
  std::vector<Connection*> told;
  for (Call* call : late) {
    if (call->refusal.ok()) {
      call->refusal = absl::DeadlineExceededError(
          "the request did not arrive whole in time");
    }
    self->Start(call);  // answered at once; its request bytes go back
    told.push_back(call->connection);
  }
  for (Connection* connection : told) {
    if (self->connections_.contains(connection)) self->Flush(connection);
  }
  if (arriving) self->ArmReceiveSweep();
}

int ReadDoor::Impl::OnFrameSent(nghttp2_session*, const nghttp2_frame* frame,
                                void* user_data) noexcept {
  auto* connection = static_cast<Connection*>(user_data);
  connection->door->door_thread_.AssertOnOwner();
  if (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) {
    connection->budget.OnAnswerSent();
  }
  return 0;
}

}  // namespace tailgate::server::read_door
