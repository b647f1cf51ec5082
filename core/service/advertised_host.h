// The host a node publishes for clients to reach it (NodeEndpoint.host), when
// kvcm.service.advertised_host is unset. In order:
//   1. the bind address (kvcm.service.listen_host) when it names one interface — clients can
//      reach the node there;
//   2. when it binds every interface (0.0.0.0, ::, *): this machine's host name, if it resolves;
//   3. else 127.0.0.1 (only clients on this host will reach it; the node logs a warning).
// The node logs which rule chose the host. Name lookups are behind HostLookup so tests can script
// them.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace kvchaos::service {

struct HostLookup {
  std::function<std::optional<std::string>()> hostname;  // gethostname(); nullopt on failure
  std::function<bool(const std::string&)> resolves;        // getaddrinfo() finds an address
  // The system's gethostname/getaddrinfo.
  static HostLookup System();
};

struct AdvertisedHost {
  std::string host;
  std::string source;  // "kvcm.service.advertised_host", "listen_host", "hostname", "fallback"
};

// True for addresses that bind every interface ("", 0.0.0.0, ::, [::], *).
bool IsWildcardAddress(const std::string& host);

AdvertisedHost ChooseAdvertisedHost(const std::string& configured, const std::string& listen_host,
                                    const HostLookup& lookup);

}  // namespace kvchaos::service
