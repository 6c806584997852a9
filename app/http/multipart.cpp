#include "app/http/multipart.h"

#include <cctype>
#include <string>

#include "common/text.h"

namespace ragd::app {
namespace {

// The value of `param` in a header like `form-data; name="file"; filename="a.txt"`.
std::string HeaderParam(std::string_view header, std::string_view param) {
  const std::string lower = AsciiLower(header);
  const std::string key = std::string(param) + "=";
  size_t pos = 0;
  while ((pos = lower.find(key, pos)) != std::string::npos) {
    if (pos == 0 || lower[pos - 1] == ';' || lower[pos - 1] == ' ') break;
    pos += key.size();
  }
  if (pos == std::string::npos) return "";
  pos += key.size();
  if (pos < header.size() && header[pos] == '"') {
    std::string out;
    for (size_t i = pos + 1; i < header.size() && header[i] != '"'; ++i) {
      if (header[i] == '\\' && i + 1 < header.size()) ++i;
      out += header[i];
    }
    return out;
  }
  size_t end = header.find(';', pos);
  return std::string(Trim(header.substr(pos, end == std::string_view::npos ? header.npos : end - pos)));
}

}  // namespace

Result<std::string> MultipartBoundary(std::string_view content_type) {
  if (AsciiLower(content_type).rfind("multipart/form-data", 0) != 0)
    return Status::InvalidArgument("expected Content-Type multipart/form-data");
  std::string b = HeaderParam(content_type, "boundary");
  if (b.empty() || b.size() > 200) return Status::InvalidArgument("multipart body without a valid boundary");
  return b;
}

Result<std::vector<FormPart>> ParseMultipart(std::string_view body, std::string_view boundary) {
  const std::string delim = "--" + std::string(boundary);
  std::vector<FormPart> parts;
  size_t pos = body.find(delim);
  if (pos == std::string_view::npos) return Status::InvalidArgument("multipart body has no parts");
  for (;;) {
    pos += delim.size();
    if (body.substr(pos, 2) == "--") return parts;  // closing delimiter
    if (body.substr(pos, 2) != "\r\n") return Status::InvalidArgument("malformed multipart delimiter");
    pos += 2;
    const size_t headers_end = body.find("\r\n\r\n", pos);
    if (headers_end == std::string_view::npos) return Status::InvalidArgument("truncated multipart headers");
    FormPart part;
    std::string_view headers = body.substr(pos, headers_end - pos);
    if (headers.size() > kMaxPartHeaderBytes)
      return Status::InvalidArgument("multipart part headers longer than " +
                                     std::to_string(kMaxPartHeaderBytes) + " bytes");
    if (!IsValidUtf8(headers)) return Status::InvalidArgument("multipart part headers are not valid UTF-8");
    while (!headers.empty()) {
      size_t eol = headers.find("\r\n");
      std::string_view line = headers.substr(0, eol);
      headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 2);
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string name = AsciiLower(Trim(line.substr(0, colon)));
      const std::string_view value = Trim(line.substr(colon + 1));
      if (name == "content-disposition") {
        part.name = HeaderParam(value, "name");
        part.filename = HeaderParam(value, "filename");
      } else if (name == "content-type") {
        part.content_type = std::string(value);
      }
    }
    const size_t data_start = headers_end + 4;
    const size_t next = body.find("\r\n" + delim, data_start);
    if (next == std::string_view::npos) return Status::InvalidArgument("truncated multipart body");
    part.data = body.substr(data_start, next - data_start);
    if (part.filename.empty()) {
      if (part.data.size() > kMaxFieldBytes)
        return Status::InvalidArgument("multipart field '" + part.name.substr(0, 64) + "' is longer than " +
                                       std::to_string(kMaxFieldBytes) + " bytes");
      if (!IsValidUtf8(part.data))
        return Status::InvalidArgument("multipart field '" + part.name.substr(0, 64) +
                                       "' is not valid UTF-8");
    }
    parts.push_back(std::move(part));
    pos = next + 2;
    if (parts.size() > 64) return Status::InvalidArgument("too many multipart parts");
  }
}

}  // namespace ragd::app
