// connect_preload: an LD_PRELOAD library that sends one process's TCP connections to chosen
// loopback addresses elsewhere, so real mode can put a proxy of that process's own in front of a
// server whose address the process learns at run time. A `kvchaos node` on `redis+sentinel://`
// is told by the sentinels where the primary is: every node gets the same address, so one proxy
// in front of the primary would cut all nodes together. With this library each node's connect()
// to that address reaches its own proxy instead (as DNAT would per network namespace), and the
// node's configuration and code stay what a user runs.
//
// $KVCHAOS_CONNECT_MAP holds comma-separated rules "127.0.0.1:FROM=127.0.0.1:TO" (IPv4 only, as
// the runner's servers bind 127.0.0.1). It is read once, when the library loads; a malformed map
// stops the process at once with a message on stderr, since a rule silently skipped would let a
// partition fault miss its node. connect() to any other address passes through unchanged. Like the
// clock preload: plain C and libc, no allocation, the next definition taken with dlsym(RTLD_NEXT)
// so a sanitizer's interceptor stays in the chain.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum { kMaxRules = 32 };

struct Rule {
  struct in_addr from_addr;
  uint16_t from_port;  // host order
  struct in_addr to_addr;
  uint16_t to_port;
};

static struct Rule g_rules[kMaxRules];
static int g_rule_count;
typedef int (*ConnectFn)(int, const struct sockaddr*, socklen_t);
static ConnectFn g_next_connect;

static ConnectFn NextConnect(void) {
  ConnectFn f;
  *(void**)&f = dlsym(RTLD_NEXT, "connect");  // ISO C has no cast from void* to a function pointer
  return f;
}

static void Die(const char* what, const char* map) {
  static const char prefix[] = "kvchaos connect preload: KVCHAOS_CONNECT_MAP ";
  (void)!write(2, prefix, sizeof prefix - 1);
  (void)!write(2, what, strlen(what));
  (void)!write(2, ": '", 3);
  (void)!write(2, map, strlen(map));
  static const char suffix[] = "' (expected 127.0.0.1:FROM=127.0.0.1:TO[,...])\n";
  (void)!write(2, suffix, sizeof suffix - 1);
  _exit(70);  // EX_SOFTWARE: the runner reports the node's exit with its log
}

// Parses "A.B.C.D:PORT" from [begin, end) into addr/port; 0 on success.
static int ParseEndpoint(const char* begin, const char* end, struct in_addr* addr, uint16_t* port) {
  const char* colon = NULL;
  for (const char* p = begin; p < end; ++p) {
    if (*p == ':') colon = p;
  }
  if (colon == NULL || colon == begin || colon - begin >= 16 || end - colon - 1 < 1 || end - colon - 1 > 5) return -1;
  char host[16];
  memcpy(host, begin, (size_t)(colon - begin));
  host[colon - begin] = '\0';
  if (inet_pton(AF_INET, host, addr) != 1) return -1;
  long value = 0;
  for (const char* p = colon + 1; p < end; ++p) {
    if (*p < '0' || *p > '9') return -1;
    value = value * 10 + (*p - '0');
  }
  if (value < 1 || value > 65535) return -1;
  *port = (uint16_t)value;
  return 0;
}

__attribute__((constructor)) static void LoadMap(void) {
  g_next_connect = NextConnect();
  if (g_next_connect == NULL) Die("is unusable: libc's connect was not found", "");
  const char* map = getenv("KVCHAOS_CONNECT_MAP");
  if (map == NULL || *map == '\0') return;
  const char* p = map;
  while (*p != '\0') {
    const char* rule_end = strchr(p, ',');
    if (rule_end == NULL) rule_end = p + strlen(p);
    const char* eq = memchr(p, '=', (size_t)(rule_end - p));
    if (eq == NULL) Die("has a rule without '='", map);
    if (g_rule_count == kMaxRules) Die("has more than 32 rules", map);
    struct Rule* r = &g_rules[g_rule_count];
    if (ParseEndpoint(p, eq, &r->from_addr, &r->from_port) != 0) Die("has a bad FROM endpoint", map);
    if (ParseEndpoint(eq + 1, rule_end, &r->to_addr, &r->to_port) != 0) Die("has a bad TO endpoint", map);
    ++g_rule_count;
    p = *rule_end == ',' ? rule_end + 1 : rule_end;
  }
}

// glibc declares the address as a transparent union (__CONST_SOCKADDR_ARG); the definition matches.
EXPORT int connect(int fd, __CONST_SOCKADDR_ARG arg, socklen_t len) {
  const struct sockaddr* addr = arg.__sockaddr__;
  // Another library's constructor may connect before ours ran: no rules yet, pass it through.
  if (g_next_connect == NULL) g_next_connect = NextConnect();
  if (addr != NULL && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
    const struct sockaddr_in* in = (const struct sockaddr_in*)addr;
    for (int i = 0; i < g_rule_count; ++i) {
      const struct Rule* r = &g_rules[i];
      if (in->sin_addr.s_addr == r->from_addr.s_addr && ntohs(in->sin_port) == r->from_port) {
        struct sockaddr_in to = *in;
        to.sin_addr = r->to_addr;
        to.sin_port = htons(r->to_port);
        return g_next_connect(fd, (const struct sockaddr*)&to, sizeof to);
      }
    }
  }
  return g_next_connect(fd, addr, len);
}
