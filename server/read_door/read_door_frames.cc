// The frame budget's side of nghttp2's callbacks (frame_budget.h): which
// frame is work and which is not, and how a connection that spent its
// budget is ended. See read_door_impl.h.

#include <nghttp2/nghttp2.h>

#include "server/read_door/read_door_impl.h"

namespace tailgate::server::read_door {

bool ReadDoor::Impl::Spend(nghttp2_session* session, Connection& connection,
                           const nghttp2_frame& frame) {
  FrameBudget& budget = connection.budget;
  const bool ack = (frame.hd.flags & NGHTTP2_FLAG_ACK) != 0;
  FrameBudget::Verdict verdict = FrameBudget::Verdict::kOk;
  switch (frame.hd.type) {
    case NGHTTP2_PING:
      verdict =
          ack ? budget.OnIdleFrame()
              : budget.OnPing(connection.door->core_.engine().clock().Now(),
                              !connection.calls.empty());
      break;
    case NGHTTP2_SETTINGS:
      if (!ack && !connection.settings_seen) {
        connection.settings_seen = true;  // the handshake's
      } else {
        verdict = budget.OnIdleFrame();
      }
      break;
    case NGHTTP2_WINDOW_UPDATE:
    case NGHTTP2_PRIORITY:
    case NGHTTP2_RST_STREAM:
      verdict = budget.OnIdleFrame();
      break;
    case NGHTTP2_DATA:
      if (frame.hd.length > 0) {
        budget.OnWork();
      } else if ((frame.hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) {
        verdict = budget.OnIdleFrame();
      }
      break;
    default:  // HEADERS (a stream opened is work: OnBeginHeaders), GOAWAY
      break;
  }
  if (verdict == FrameBudget::Verdict::kOk) return true;
  EndForAbuse(session, FrameBudget::DebugData(verdict));
  return false;
}

void ReadDoor::Impl::EndForAbuse(nghttp2_session* session,
                                 absl::string_view debug_data) {
  nghttp2_submit_goaway(session, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session),
                        NGHTTP2_ENHANCE_YOUR_CALM,
                        reinterpret_cast<const uint8_t*>(debug_data.data()),
                        debug_data.size());
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
