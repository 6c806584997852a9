// The HTTP boundary against careless or hostile input: server errors that
// keep internal detail out of the answer, the headers every response
// carries, and multipart parts whose headers or plain fields are too long or
// not UTF-8. A real HttpServer on a loopback port, talked to over a socket.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "app/http/http_server.h"
#include "app/http/multipart.h"

namespace ragd::app {
namespace {

// Sends `request` and reads until the server closes or `until` appears.
std::string Exchange(int port, const std::string& request, const std::string& until = "\r\n\r\n") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "";
  }
  ::send(fd, request.data(), request.size(), 0);
  std::string got;
  char buf[4096];
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
    const size_t head = got.find("\r\n\r\n");
    if (head != std::string::npos && got.find(until, head + 4) != std::string::npos) break;
  }
  ::close(fd);
  return got;
}

class HttpHardeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions options;
    options.port = 0;
    options.threads = 1;
    server_ = std::make_unique<HttpServer>(options);
    server_->Route("GET", "/boom", [](const HttpRequest&, HttpExchange&) -> HttpResponse {
      throw std::runtime_error("cannot open /srv/ragd/secret/app.db: disk on fire");
    });
    server_->Route("GET", "/io", [](const HttpRequest&, HttpExchange&) {
      return HttpResponse::Error(500, "server_error", "cannot write /srv/ragd/index.faiss.tmp");
    });
    server_->Route("GET", "/ok",
                   [](const HttpRequest&, HttpExchange&) { return HttpResponse::Json(200, "{}"); });
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override { server_->Shutdown(); }

  std::string Get(const std::string& path) {
    return Exchange(server_->port(),
                    "GET " + path + " HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-test-1\r\n\r\n", "}");
  }

  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpHardeningTest, ServerErrorsKeepInternalDetailOut) {
  for (const char* path : {"/boom", "/io"}) {
    const std::string r = Get(path);
    ASSERT_EQ(r.rfind("HTTP/1.1 500", 0), 0u) << r;
    EXPECT_EQ(r.find("/srv/ragd"), std::string::npos) << r;
    EXPECT_EQ(r.find("disk on fire"), std::string::npos) << r;
    EXPECT_NE(r.find("req-test-1"), std::string::npos) << r;  // what to quote to the operator
  }
}

TEST_F(HttpHardeningTest, ResponsesAreNeitherSniffedNorCached) {
  for (const char* path : {"/ok", "/io", "/no-such-route"}) {
    const std::string r = Get(path);
    EXPECT_NE(r.find("X-Content-Type-Options: nosniff\r\n"), std::string::npos) << r;
    EXPECT_NE(r.find("Cache-Control: no-store\r\n"), std::string::npos) << r;
  }
}

std::string Part(const std::string& headers, const std::string& data) {
  return "--b\r\n" + headers + "\r\n\r\n" + data + "\r\n";
}

TEST(MultipartLimitsTest, PartHeadersAreCapped) {
  const std::string body = Part("Content-Disposition: form-data; name=\"file\"; filename=\"" +
                                    std::string(kMaxPartHeaderBytes, 'a') + "\"",
                                "x") +
                           "--b--\r\n";
  EXPECT_FALSE(ParseMultipart(body, "b").ok());
}

TEST(MultipartLimitsTest, PlainFieldsAreCappedButFilesAreNot) {
  const std::string big(kMaxFieldBytes + 1, 't');
  EXPECT_FALSE(
      ParseMultipart(Part("Content-Disposition: form-data; name=\"title\"", big) + "--b--\r\n", "b").ok());
  auto file = ParseMultipart(
      Part("Content-Disposition: form-data; name=\"file\"; filename=\"a.txt\"", big) + "--b--\r\n", "b");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)[0].data.size(), big.size());
}

TEST(MultipartLimitsTest, HeadersAndPlainFieldsMustBeUtf8) {
  EXPECT_FALSE(
      ParseMultipart(Part("Content-Disposition: form-data; name=\"title\"", "caf\xe9") + "--b--\r\n", "b")
          .ok());
  EXPECT_FALSE(
      ParseMultipart(
          Part("Content-Disposition: form-data; name=\"file\"; filename=\"\xff.txt\"", "x") + "--b--\r\n",
          "b")
          .ok());
  // A file's own bytes may be anything.
  EXPECT_TRUE(
      ParseMultipart(
          Part("Content-Disposition: form-data; name=\"file\"; filename=\"a.bin\"", "\xff\xfe") + "--b--\r\n",
          "b")
          .ok());
}

}  // namespace
}  // namespace ragd::app
