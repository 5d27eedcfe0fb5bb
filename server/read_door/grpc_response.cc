#include "server/read_door/grpc_response.h"

#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/read_door/grpc_wire.h"

namespace tailgate::server::read_door {
namespace {

// A field whose name and value outlive the submission (constants): nghttp2
// keeps the pointers instead of copying.
nghttp2_nv ConstantField(absl::string_view name, absl::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
          name.size(), value.size(),
          NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
}

// One whose value nghttp2 copies (it is gone once the call returns).
nghttp2_nv CopiedField(absl::string_view name, const std::string& value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
          name.size(), value.size(), NGHTTP2_NV_FLAG_NO_COPY_NAME};
}

constexpr absl::string_view kContentType = "application/grpc";

}  // namespace

int SubmitResponseHeaders(nghttp2_session* session, int32_t stream_id,
                          const nghttp2_data_provider& messages) {
  const nghttp2_nv headers[] = {ConstantField(":status", "200"),
                                ConstantField("content-type", kContentType)};
  return nghttp2_submit_response(session, stream_id, headers,
                                 std::size(headers), &messages);
}

int SubmitTrailers(nghttp2_session* session, int32_t stream_id,
                   const absl::Status& status) {
  const std::string code = absl::StrCat(static_cast<int>(status.code()));
  const std::string message = PercentEncode(status.message());
  const nghttp2_nv trailers[] = {CopiedField("grpc-status", code),
                                 CopiedField("grpc-message", message)};
  return nghttp2_submit_trailer(session, stream_id, trailers,
                                message.empty() ? 1 : std::size(trailers));
}

int SubmitTrailersOnly(nghttp2_session* session, int32_t stream_id,
                       int http_status, const absl::Status& status) {
  const std::string http = absl::StrCat(http_status);
  const std::string code = absl::StrCat(static_cast<int>(status.code()));
  const std::string message = PercentEncode(status.message());
  const nghttp2_nv fields[] = {
      CopiedField(":status", http),
      ConstantField("content-type", kContentType),
      CopiedField("grpc-status", code),
      CopiedField("grpc-message", message),
      ConstantField("grpc-accept-encoding", "identity"),
  };
  return nghttp2_submit_response(session, stream_id, fields, std::size(fields),
                                 nullptr);
}

}  // namespace tailgate::server::read_door
