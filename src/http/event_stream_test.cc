// EventStream against a scripted one-connection HTTP server on loopback: events that arrive
// with the response head, chunks split anywhere, the end of the stream, a refused stream, and
// close() from another thread.
#include "http/event_stream.h"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace shoal::http {
namespace {

using std::chrono::milliseconds;

// Accepts one connection, reads the request head, then writes each piece with a pause between.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<std::string> pieces, milliseconds pause = milliseconds(30))
      : pieces_(std::move(pieces)), pause_(pause) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(listener_, 1), 0);
    EXPECT_EQ(::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len), 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedServer() {
    thread_.join();
    ::close(listener_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/event"; }
  std::string request() const { return request_; }

 private:
  void serve() {
    const int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    char buf[4096];
    while (request_.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      request_.append(buf, static_cast<size_t>(n));
    }
    for (const auto& piece : pieces_) {
      (void)::send(fd, piece.data(), piece.size(), MSG_NOSIGNAL);
      std::this_thread::sleep_for(pause_);
    }
    ::close(fd);
  }

  std::vector<std::string> pieces_;
  milliseconds pause_;
  int listener_ = -1;
  int port_ = 0;
  std::string request_;
  std::thread thread_;
};

constexpr const char* kChunkedHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST(EventStreamTest, EventsComeWhateverTheChunkAndReadBoundaries) {
  ScriptedServer server(
      {
          std::string(kChunkedHead) + "f\r\ndata: {\"a\":1}\n\n\r\n",  // an event with the head
          "1",                              // a size line split across reads: 0x18 = 24
          "8\r\ndata: twenty-one bytes\n",  // 23 bytes of the chunk ...
          "\n\r\n",                         // ... its last byte, the blank line
          "0\r\n\r\n",                      // the last chunk
      },
      milliseconds(300));
  EventStreamOptions options;
  options.headers = {{"Authorization", "Basic b3BlbmNvZGU6cHc="}};
  auto stream = EventStream::open(server.url(), options);
  ASSERT_TRUE(stream.isOk()) << stream.status().toString();
  auto first = (*stream)->next(milliseconds(150));
  ASSERT_TRUE(first.isOk());
  ASSERT_TRUE(first->has_value());  // not held back until more bytes come (300 ms later)
  EXPECT_EQ(**first, "{\"a\":1}");
  auto second = (*stream)->next(milliseconds(2000));
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ(**second, "twenty-one bytes");
  auto end = (*stream)->next(milliseconds(2000));
  EXPECT_EQ(end.status().reason(), "event-stream-ended");
  EXPECT_NE(server.request().find("GET /event HTTP/1.1\r\n"), std::string::npos);
  EXPECT_NE(server.request().find("Accept: text/event-stream"), std::string::npos);
  EXPECT_NE(server.request().find("\r\nAuthorization: Basic b3BlbmNvZGU6cHc=\r\n"),
            std::string::npos);
}

TEST(EventStreamTest, AConnectionClosedMidBodyIsAnEndAndATimeoutIsNot) {
  ScriptedServer server({std::string(kChunkedHead)});
  auto stream = EventStream::open(server.url());
  ASSERT_TRUE(stream.isOk()) << stream.status().toString();
  auto quiet = (*stream)->next(milliseconds(10));
  ASSERT_TRUE(quiet.isOk());
  EXPECT_FALSE(quiet->has_value());  // nothing yet: still open
  auto end = (*stream)->next(milliseconds(2000));
  EXPECT_EQ(end.status().reason(), "event-stream-ended");
}

TEST(EventStreamTest, AnotherAnswerIsNotAnEventStream) {
  ScriptedServer server(
      {"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"});
  auto stream = EventStream::open(server.url());
  EXPECT_EQ(stream.status().reason(), "not-an-event-stream");
  EXPECT_NE(stream.status().message().find("404"), std::string::npos);
}

TEST(EventStreamTest, CloseWakesAWaitingReader) {
  // A chunk announced and only begun: the stream stays open.
  ScriptedServer server({std::string(kChunkedHead), "1f4\r\ndata: "});
  auto stream = EventStream::open(server.url());
  ASSERT_TRUE(stream.isOk());
  std::thread closer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    (*stream)->close();
  });
  const auto start = std::chrono::steady_clock::now();
  auto next = (*stream)->next(milliseconds(5000));
  closer.join();
  EXPECT_EQ(next.status().reason(), "event-stream-closed");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
}

TEST(EventStreamTest, NobodyListeningIsAConnectFailure) {
  // A port that was just free: nothing listens on it.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  ::close(fd);
  auto stream = EventStream::open("http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/e");
  EXPECT_EQ(stream.status().reason(), "http-connect-failed");
}

}  // namespace
}  // namespace shoal::http
