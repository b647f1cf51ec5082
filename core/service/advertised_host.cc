// ChooseAdvertisedHost and the system host-name lookup (see advertised_host.h).
#include "core/service/advertised_host.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>

namespace kvchaos::service {

HostLookup HostLookup::System() {
  HostLookup l;
  l.hostname = []() -> std::optional<std::string> {
    std::array<char, 256> buf{};
    if (::gethostname(buf.data(), buf.size() - 1) != 0 || buf[0] == '\0') return std::nullopt;
    return std::string(buf.data());
  };
  l.resolves = [](const std::string& name) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &res);
    if (res != nullptr) ::freeaddrinfo(res);
    return rc == 0;
  };
  return l;
}

bool IsWildcardAddress(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]" || host == "*";
}

AdvertisedHost ChooseAdvertisedHost(const std::string& configured, const std::string& listen_host,
                                    const HostLookup& lookup) {
  if (!configured.empty()) return {configured, "kvcm.service.advertised_host"};
  if (!IsWildcardAddress(listen_host)) return {listen_host, "listen_host"};
  if (lookup.hostname) {
    if (auto name = lookup.hostname(); name && !name->empty() && lookup.resolves && lookup.resolves(*name)) {
      return {*name, "hostname"};
    }
  }
  return {"127.0.0.1", "fallback"};
}

}  // namespace kvchaos::service
