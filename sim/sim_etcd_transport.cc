// SimEtcdTransport: the gateway's requests over the simulated network (see the header).
#include "sim/sim_etcd_transport.h"

namespace kvchaos::sim {
namespace {

// The trace tag of a request (SimRpc keeps a pointer to it: static storage).
const TraceTag& PathTag(std::string_view path) {
  static constexpr TraceTag kRange("etcd /v3/kv/range");
  static constexpr TraceTag kTxn("etcd /v3/kv/txn");
  static constexpr TraceTag kPut("etcd /v3/kv/put");
  static constexpr TraceTag kDelete("etcd /v3/kv/deleterange");
  static constexpr TraceTag kGrant("etcd /v3/lease/grant");
  static constexpr TraceTag kKeepAlive("etcd /v3/lease/keepalive");
  static constexpr TraceTag kRevoke("etcd /v3/lease/revoke");
  static constexpr TraceTag kTimeToLive("etcd /v3/lease/timetolive");
  static constexpr TraceTag kOther("etcd request");
  for (const TraceTag* t : {&kRange, &kTxn, &kPut, &kDelete, &kGrant, &kKeepAlive, &kRevoke, &kTimeToLive}) {
    if (t->name.substr(5) == path) return *t;
  }
  return kOther;
}

}  // namespace

SimEtcdTransport::SimEtcdTransport(SimRuntime& runtime, SimNetwork& network, SimEtcd& etcd, int node)
    : runtime_(runtime), etcd_(etcd), rpc_(runtime, network, node) {}

election::EtcdExchange SimEtcdTransport::Post(size_t member, std::string_view path, const std::string& body,
                                              Duration timeout) {
  if (member >= static_cast<size_t>(etcd_.members())) {
    return {false, 0, {}, Status::Unavailable("no such member in the simulated cluster")};
  }
  SimEtcd* etcd = &etcd_;
  const int m = static_cast<int>(member);
  auto serve = [etcd, m, path = std::string(path), body](SimRpc<EtcdAnswer>::Respond respond) {
    etcd->Serve(m, path, body, std::move(respond));
  };
  EtcdAnswer answer;
  switch (rpc_.Call(etcd_.host(m), PathTag(path), serve, runtime_.Now() + timeout, &answer)) {
    case SimRpc<EtcdAnswer>::Outcome::kReplied:
      if (answer.refused) {
        return {false, 0, {}, Status::Unavailable("cannot connect (refused: nothing listens on that port)")};
      }
      return {true, answer.http_status, std::move(answer.body), Status::Ok()};
    case SimRpc<EtcdAnswer>::Outcome::kCutOff:
      return {false, 0, {}, Status::Unavailable("node process is gone")};
    case SimRpc<EtcdAnswer>::Outcome::kTimedOut:
      break;
  }
  return {false, 0, {}, Status::Timeout("no answer within " + std::to_string(ToMillis(timeout)) + " ms")};
}

}  // namespace kvchaos::sim
