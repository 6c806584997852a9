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

// Splits `body` into its parts. The parts view `body`, which must outlive them.
Result<std::vector<FormPart>> ParseMultipart(std::string_view body, std::string_view boundary);

}  // namespace ragd::app
