// multipart/form-data uploads (app/http/multipart.h), the one request body
// besides JSON that reaches ragd from any signed-in admin's browser.
//
// Input: "<Content-Type header value>\r\n<body>" when it starts with
// "multipart/"; otherwise the whole input is a body delimited by a fixed
// boundary, so that the mutations spend their time inside the parts.
#include <cstdint>
#include <string>
#include <string_view>

#include "app/http/multipart.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ragd;

namespace {

constexpr std::string_view kFixedBoundary = "----ragdFuzzBoundary7MA4YWxk";

bool Inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(fuzz::AsText(data, size));
  std::string_view body = input;
  std::string boundary(kFixedBoundary);
  if (body.starts_with("multipart/")) {
    const size_t eol = body.find("\r\n");
    const std::string_view content_type = body.substr(0, eol);
    body = eol == std::string_view::npos ? std::string_view() : body.substr(eol + 2);
    auto b = app::MultipartBoundary(content_type);
    if (!b.ok()) return 0;
    FUZZ_CHECK(!b->empty() && b->size() <= 200, "boundary length");
    boundary = *b;
  }
  auto parts = app::ParseMultipart(body, boundary);
  if (!parts.ok()) return 0;
  FUZZ_CHECK(parts->size() <= 64, "part count is bounded");
  for (const app::FormPart& p : *parts) {
    FUZZ_CHECK(Inside(p.data, body), "part data outside the body");
    FUZZ_CHECK(p.data.find("\r\n--" + boundary) == std::string_view::npos, "part data holds a delimiter");
  }
  return 0;
}
