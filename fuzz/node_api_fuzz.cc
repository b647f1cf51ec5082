// Fuzz target: the node's request handling on a real MetaNode (memory:// coordination and index,
// leading, no sockets). The first byte chooses:
//   high bit set: the rest is raw bytes on a port (bit 6: admin), framed by ScanHttpRequest and,
//                 when it frames a complete request, answered as a worker does (HttpApi::Answer:
//                 cpp-httplib's parse and routing, then NodeApi);
//   else:         bits 0-5 pick a call of the port (bit 6: admin), the rest is its JSON body for
//                 NodeApi::Handle.
// Every answer must be an HTTP answer (raw) or a JSON object whose "code" agrees with its HTTP
// status (NodeApi). The node is rebuilt every few thousand inputs so the data plane stays small.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/logging.h"
#include "core/common/runtime.h"
#include "core/service/http_api.h"
#include "core/service/http_request_scan.h"
#include "core/service/meta_node.h"
#include "core/service/node_api.h"
#include "core/service/wire_format.h"
#include "fuzz/fuzz_check.h"

namespace {

using kvchaos::service::ApiPort;

struct Node {
  Node() : node(kvchaos::Runtime::Real(), Config(), 1), api(node), http(kvchaos::Runtime::Real(), api, 1, limits()) {
    FUZZ_CHECK(node.Start(1, 2).ok(), "the fuzz node did not start");
    FUZZ_CHECK(node.elector().WaitForState(kvchaos::election::ElectorState::kLeader,
                                           kvchaos::Runtime::Real().Now() + std::chrono::seconds(30)),
               "the fuzz node did not lead");
    // A storage for the data plane to write to.
    api.Handle(ApiPort::kMeta, "AddStorage",
               R"({"storage": {"type": "posix", "global_unique_name": "nfs", "integrity": {"enable_meta_checksum": true, "algo": "crc64_full"}}})");
  }
  ~Node() { node.Stop(); }
  static kvchaos::service::NodeConfig Config() {
    kvchaos::service::NodeConfig c;
    c.node_id = "fuzz";
    c.lease_ms = 60000;
    c.loop_interval_ms = 100;
    c.http.max_keys_per_call = 64;  // small bounds: the fuzzer reaches them
    c.http.max_body_bytes = 1 << 16;
    return c;
  }
  static const kvchaos::service::HttpLimits& limits() {
    static const kvchaos::service::HttpLimits l = Config().http;
    return l;
  }
  kvchaos::service::MetaNode node;
  kvchaos::service::NodeApi api;
  kvchaos::service::HttpApi http;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kvchaos::InitLogging();
  (void)kvchaos::SetLogLevel("off");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<Node> n;
  static int runs = 0;
  if (!n || ++runs % 5000 == 0) {
    n.reset();
    n = std::make_unique<Node>();
  }
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const ApiPort port = (selector & 0x40) != 0 ? ApiPort::kAdmin : ApiPort::kMeta;
  if ((selector & 0x80) != 0) {
    const kvchaos::service::HttpRequestScan scan = kvchaos::service::ScanHttpRequest(rest, Node::limits());
    if (scan.outcome == kvchaos::service::HttpRequestScan::Outcome::kRefused) {
      FUZZ_CHECK(scan.http_status >= 400 && !scan.reason.empty(), "a refusal without a status or a reason");
      return 0;
    }
    if (scan.outcome != kvchaos::service::HttpRequestScan::Outcome::kComplete) return 0;
    FUZZ_CHECK(scan.request_bytes <= rest.size() && scan.header_bytes <= scan.request_bytes, "framing past the input");
    const std::string answer = n->http.Answer(port, rest.substr(0, scan.request_bytes));
    FUZZ_CHECK(answer.starts_with("HTTP/1.1 "), "not an HTTP answer: " + answer.substr(0, 64));
    return 0;
  }
  const std::vector<std::string> calls = n->api.Calls(port);
  const std::string& call = calls[(selector & 0x3f) % calls.size()];
  const kvchaos::service::ApiAnswer answer = n->api.Handle(port, call, rest);
  const nlohmann::json body = nlohmann::json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(body.is_object() && body.contains("code") && body["code"].is_string(), call + " answered: " + answer.body);
  kvchaos::StatusCode code{};
  FUZZ_CHECK(kvchaos::StatusCodeFromName(body["code"].get<std::string>(), &code), "unknown code in " + answer.body);
  FUZZ_CHECK(kvchaos::service::wire::HttpStatusFor(code) == answer.http_status,
             call + ": HTTP " + std::to_string(answer.http_status) + " for code " + body["code"].get<std::string>());
  return 0;
}
