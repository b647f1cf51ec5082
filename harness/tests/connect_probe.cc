// connect_probe PORT: a child for the connect preload's test (connect_preload_test.cc). Connects
// to 127.0.0.1:PORT with connect(2), as hiredis does, writes "probe" and exits 0; on a refused or
// failed connection prints the errno and exits 1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: connect_probe PORT\n");
    return 2;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[1])));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::printf("connect failed: %s\n", std::strerror(errno));
    return 1;
  }
  if (::write(fd, "probe", 5) != 5) return 1;
  ::close(fd);
  return 0;
}
