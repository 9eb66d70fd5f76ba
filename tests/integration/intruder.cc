// intruder: what another local account tries against a mesh it does not own, run by the
// security tests as uid `nobody` (setpriv). It uses no Shoal code: a raw NATS client over a
// TCP socket, and plain open() calls.
//
//   intruder nats HOST PORT     connect, read INFO, send CONNECT without credentials, a SUB to
//                               every subject and a PING; prints the server's answer lines.
//                               Exit 0: admitted (PONG); 3: refused (-ERR … Authorization
//                               Violation); 4: anything else.
//   intruder read PATH…         tries to open each path for reading (a directory: to list it)
//                               and prints `PATH: readable` or `PATH: <errno name>`; exit 0 when
//                               nothing was readable, 5 otherwise.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string readSome(int fd, int waitMs) {
  std::string out;
  timeval tv{waitMs / 1000, (waitMs % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.find("PONG") != std::string::npos || out.find("-ERR") != std::string::npos) break;
    if (out.rfind("INFO", 0) == 0 && out.find("\r\n") != std::string::npos) break;  // one line
  }
  return out;
}

int raw(const char* host, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host, &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::printf("connect: %s\n", std::strerror(errno));
    return 4;
  }
  std::string info = readSome(fd, 2000);
  std::printf("INFO %s\n", info.rfind("INFO", 0) == 0 ? "received" : "missing");
  const std::string hello =
      "CONNECT {\"verbose\":false,\"pedantic\":false,\"name\":\"intruder\"}\r\nSUB > 1\r\nPING\r\n";
  (void)!::write(fd, hello.data(), hello.size());
  std::string answer = readSome(fd, 3000);
  std::printf("%s\n", answer.c_str());
  ::close(fd);
  if (answer.find("Authorization Violation") != std::string::npos) return 3;
  if (answer.find("PONG") != std::string::npos) return 0;
  return 4;
}

int tryRead(int argc, char** argv) {
  int readable = 0;
  for (int i = 2; i < argc; ++i) {
    struct stat st {};
    bool ok = false;
    int err = 0;
    if (::stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      DIR* d = ::opendir(argv[i]);
      ok = d != nullptr;
      err = errno;
      if (d != nullptr) ::closedir(d);
    } else {
      int fd = ::open(argv[i], O_RDONLY);
      ok = fd >= 0;
      err = errno;
      if (fd >= 0) ::close(fd);
    }
    readable += ok ? 1 : 0;
    std::printf("%s: %s\n", argv[i], ok ? "readable" : strerrorname_np(err));
  }
  return readable == 0 ? 0 : 5;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "nats") return raw(argv[2], std::atoi(argv[3]));
  if (argc >= 3 && std::string(argv[1]) == "read") return tryRead(argc, argv);
  std::fprintf(stderr, "usage: intruder nats HOST PORT | intruder read PATH...\n");
  return 2;
}
