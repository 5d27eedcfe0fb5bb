// Raw HTTP/2 for tests of the doors where a client must misbehave (hold
// its flow-control window shut, reset what it asked for, flood frames,
// never end a request): frames written byte by byte, and the door's
// frames read back from a blocking loopback socket.
//
// Example:
//   std::string out = Preface();
//   out += Frame(kHeaders, kEndHeaders, 1, ReadCallHeaders());
//   out += Frame(kData, kEndStream, 1, ReadMessage("/item"));
//   SendAll(fd, out);  // door_harness.h
//   std::optional<GoAway> goaway = WaitForGoAway(fd);
//
// Thread safety: free functions; one thread per socket.

#ifndef TAILGATE_SERVER_TESTING_RAW_H2_FRAMES_H_
#define TAILGATE_SERVER_TESTING_RAW_H2_FRAMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::server::testing {

// Frame types and flags (RFC 9113, section 6).
inline constexpr uint8_t kData = 0x0, kHeaders = 0x1, kPriority = 0x2,
                         kRstStream = 0x3, kSettings = 0x4, kPing = 0x6,
                         kGoAway = 0x7, kWindowUpdate = 0x8;
inline constexpr uint8_t kEndStream = 0x1, kEndHeaders = 0x4;

// How long the readers below wait for the door.
inline constexpr absl::Duration kFrameWait = absl::Seconds(10);

// One frame: its 9-byte header, then `payload`.
std::string Frame(uint8_t type, uint8_t flags, uint32_t stream,
                  absl::string_view payload);

// HPACK: appends a literal field without indexing, new name, no Huffman
// coding (name and value under 128 bytes).
void AppendField(std::string& block, absl::string_view name,
                 absl::string_view value);

// The client's connection preface and an empty SETTINGS frame.
std::string Preface();

// The header block of a HedgedRead.Read call (of `method`).
std::string ReadCallHeaders(absl::string_view content_type = "application/grpc",
                            absl::string_view method = "Read");

// A ReadRequest for `path` as one gRPC message (its prefix included): the
// payload of a DATA frame.
std::string ReadMessage(const std::string& path);

// A ReadManyRequest for `paths` as one gRPC message (its prefix included).
std::string ReadManyMessage(const std::vector<std::string>& paths,
                            uint32_t max_in_flight = 0);

// The frames of a Read call for `path` on stream 1, after the preface and
// a SETTINGS frame that shuts every stream's window (initial window 0).
std::string ReadCallWithWindowShut(
    const std::string& path,
    absl::string_view content_type = "application/grpc");

// Reads frames until one of `type` on `stream`; its payload, or nullopt if
// the connection ends (or nothing comes within kFrameWait) first.
std::optional<std::string> WaitForFrame(int fd, uint8_t type, uint32_t stream);

// The error code of the RST_STREAM the door sends for `stream`.
std::optional<uint32_t> WaitForReset(int fd, uint32_t stream);

struct GoAway {
  uint32_t code = 0;
  std::string debug_data;
};
// The GOAWAY the door sends.
std::optional<GoAway> WaitForGoAway(int fd);

// True once the door has closed `fd` (a read finds its end, nothing but
// frames before it); false if it stays open for kFrameWait.
bool ClosedByTheDoor(int fd);

}  // namespace tailgate::server::testing

#endif  // TAILGATE_SERVER_TESTING_RAW_H2_FRAMES_H_
