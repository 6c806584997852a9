// What a drain relies on at the HTTP boundary: HttpServer::InFlight counts a
// handler while it runs and a deferred response until its last bytes are
// written or its client leaves; InterruptDeferred stops a producer through its
// cancel hook while the client can still be told why. A real HttpServer on a
// loopback port, talked to over sockets.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "app/http/http_server.h"

namespace ragd::app {
namespace {

// Polls `done` for up to 10 s.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A client connection that sent one GET.
class Client {
 public:
  Client(int port, const std::string& path) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
      ::send(fd_, request.data(), request.size(), 0);
    }
  }
  ~Client() { Close(); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // What arrives until `until` has (or the server closes the connection, or
  // 10 s pass).
  std::string Read(const std::string& until) {
    std::string got;
    char buf[4096];
    for (ssize_t n; got.find(until) == std::string::npos && (n = ::recv(fd_, buf, sizeof buf, 0)) > 0;)
      got.append(buf, static_cast<size_t>(n));
    return got;
  }

 private:
  int fd_;
};

class HttpDrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HttpServer>(HttpServerOptions{.port = 0, .threads = 1});
    server_->Route("GET", "/count", [this](const HttpRequest&, HttpExchange&) {
      return HttpResponse::Json(200, std::to_string(server_->InFlight()));
    });
    // Defers and leaves the response to the test, like a generation.
    server_->Route("GET", "/hold", [this](const HttpRequest&, HttpExchange& ex) {
      auto r = ex.Defer();
      r->OnCancel([this] { ++hooks_; });
      std::lock_guard<std::mutex> lock(mu_);
      held_ = r;
      return HttpResponse::Json(200, "");
    });
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override { server_->Shutdown(); }

  std::shared_ptr<AsyncResponse> Held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }

  std::unique_ptr<HttpServer> server_;
  std::atomic<int> hooks_{0};
  std::mutex mu_;
  std::shared_ptr<AsyncResponse> held_;  // GUARDED_BY(mu_)
};

TEST_F(HttpDrainTest, AHandlerCountsWhileItRuns) {
  EXPECT_EQ(server_->InFlight(), 0u);
  Client c(server_->port(), "/count");
  const std::string r = c.Read("\r\n\r\n1");
  EXPECT_NE(r.find("\r\n\r\n1"), std::string::npos) << r;
  EXPECT_TRUE(Eventually([&] { return server_->InFlight() == 0; }));
}

TEST_F(HttpDrainTest, InterruptedStreamStillEndsAndStopsCountingOnceWritten) {
  Client c(server_->port(), "/hold");
  ASSERT_TRUE(Eventually([&] { return Held() != nullptr && server_->InFlight() == 1; }));
  auto r = Held();
  ASSERT_TRUE(r->StartStream(200, "text/plain"));
  server_->InterruptDeferred();
  EXPECT_EQ(hooks_.load(), 1);
  EXPECT_FALSE(r->cancelled());  // the client is still there: it can be told why
  EXPECT_EQ(server_->InFlight(), 1u);
  EXPECT_TRUE(r->Write("cut short"));
  r->End();
  const std::string got = c.Read("0\r\n\r\n");
  EXPECT_NE(got.find("cut short"), std::string::npos) << got;
  EXPECT_NE(got.find("0\r\n\r\n"), std::string::npos) << got;
  EXPECT_TRUE(Eventually([&] { return server_->InFlight() == 0; }));
  server_->InterruptDeferred();  // the hook runs once
  EXPECT_EQ(hooks_.load(), 1);
}

TEST_F(HttpDrainTest, AStreamWhoseClientLeftNoLongerCounts) {
  Client c(server_->port(), "/hold");
  ASSERT_TRUE(Eventually([&] { return Held() != nullptr && server_->InFlight() == 1; }));
  c.Close();
  EXPECT_TRUE(Eventually([&] { return server_->InFlight() == 0; }));
  EXPECT_EQ(hooks_.load(), 1);
  EXPECT_TRUE(Held()->cancelled());
}

}  // namespace
}  // namespace ragd::app
