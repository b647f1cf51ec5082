// NodeApi: the node's request handling, without a transport. A call is a name ("StartWriteCache"),
// the port it arrived on and a JSON text body; the answer is an HTTP status and a JSON text body
// (wire_format.h). HttpApi serves it over cpp-httplib; the simulator carries the same calls over
// its simulated network as JSON values (HandleValue: the same field checks, bounds and dispatch,
// without writing and re-reading the text, which would cost the simulator half its time).
//   admin port: GetClusterInfo, GetManagerClusterInfo, CheckHealth, LeaderDemote, ListNodes
//   meta port:  GetClusterInfo (for client discovery), StartWriteCache, FinishWriteCache,
//               GetCacheLocation, RemoveCache, AddStorage, GetStorageConfig, ListStorages
// Bodies are read strictly (JsonRequest): bad JSON, unknown fields or wrong types answer 400 with
// a message naming the field, before the node is asked to change anything; so do arrays past
// kvcm.service.http_max_keys_per_call entries (the parser drops them as it reads). Followers answer
// data-plane calls 421 NotLeader with the leader's endpoint. Thread-safe (calls run concurrently).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvchaos::service {

class MetaNode;

enum class ApiPort { kMeta, kAdmin };

struct ApiAnswer {
  int http_status = 200;
  std::string body;  // a JSON object (wire_format.h)
};

// An answer whose body is a JSON value, for a transport that carries values (the simulator's).
struct ApiReply {
  int http_status = 200;
  nlohmann::json body;  // a JSON object (wire_format.h)
};

class JsonRequest;

class NodeApi {
 public:
  explicit NodeApi(MetaNode& node);

  // Answers `call` as the port's route does; a call the port does not serve is 404 NotFound.
  ApiAnswer Handle(ApiPort port, std::string_view call, std::string_view body) const;
  // The same on a body that is a JSON value already (null reads as {}): the same checks, bounds
  // and answers, without the text in between.
  ApiReply HandleValue(ApiPort port, std::string_view call, nlohmann::json body) const;
  // The calls a port serves, sorted.
  std::vector<std::string> Calls(ApiPort port) const;
  // The node the calls go to (the admin port's /metrics reads it).
  MetaNode& node() const { return node_; }

 private:
  using Handler = std::function<ApiReply(JsonRequest& request)>;
  void Routes();
  const Handler* Route(ApiPort port, std::string_view call) const;
  ApiReply NoSuchCall(ApiPort port, std::string_view call) const;
  static ApiAnswer Text(const ApiReply& reply);

  MetaNode& node_;
  std::map<std::string, Handler, std::less<>> meta_;
  std::map<std::string, Handler, std::less<>> admin_;
};

}  // namespace kvchaos::service
