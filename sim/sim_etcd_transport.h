// SimEtcdTransport: the production EtcdGateway's transport (core/election/etcd_transport.h) in the
// simulator. Each request travels over SimNetwork from the node's host to the member's host, where
// SimEtcd answers it on the scheduler context, and the answer travels back; the caller waits on its
// own node's clock for at most the gateway's timeout (SimRpc). A crashed member's refusal comes
// back as "connection refused"; a member that holds the request (paused, waiting for a leader) or
// a cut link leaves the caller to time out — as the HTTP transport sees a real member.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/election/etcd_transport.h"
#include "sim/sim_etcd.h"
#include "sim/sim_network.h"
#include "sim/sim_rpc.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

class SimEtcdTransport final : public election::EtcdTransport {
 public:
  // `node` is the caller's host; member i of the gateway's endpoints is member i of `etcd`.
  SimEtcdTransport(SimRuntime& runtime, SimNetwork& network, SimEtcd& etcd, int node);

  election::EtcdExchange Post(size_t member, std::string_view path, const std::string& body, Duration timeout) override;

  // The node's process is gone: pending and later requests fail at once.
  void CutOff() { rpc_.CutOff(); }

 private:
  SimRuntime& runtime_;
  SimEtcd& etcd_;
  SimRpc<EtcdAnswer> rpc_;
};

}  // namespace kvchaos::sim
