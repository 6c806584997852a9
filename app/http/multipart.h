// multipart/form-data bodies (RFC 7578), as browsers and curl -F send them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ragd::app {

struct FormPart {
  std::string name;          // the form field name
  std::string filename;      // "" for plain fields
  std::string content_type;  // the part's Content-Type, "" when absent
  std::string_view data;     // points into the body passed to ParseMultipart
};

// The boundary parameter of a multipart Content-Type, or InvalidArgument.
Result<std::string> MultipartBoundary(std::string_view content_type);

// Limits on what a part may carry besides a file's bytes: its header block,
// and the value of a plain field (no filename, e.g. "title").
inline constexpr size_t kMaxPartHeaderBytes = 8192;
inline constexpr size_t kMaxFieldBytes = 4096;

// Splits `body` into its parts. The parts view `body`, which must outlive them.
// InvalidArgument for a malformed body, a header block over
// kMaxPartHeaderBytes, a plain field over kMaxFieldBytes, or a name,
// filename, content type or plain field that is not valid UTF-8.
Result<std::vector<FormPart>> ParseMultipart(std::string_view body, std::string_view boundary);

}  // namespace ragd::app
