// The metadata cluster from Python: client::LeaderDiscovery (who leads, calls that follow the
// leader across failovers) and one node's cluster view, as `kvchaos cluster info` asks for it.
// Network calls release the GIL; answers come back as dicts.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "core/client/cluster_view.h"
#include "core/client/leader_discovery.h"
#include "core/common/runtime.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/errors.h"

namespace kvchaos::python {
namespace py = pybind11;

void RegisterCluster(py::module_& m) {
  py::class_<client::LeaderDiscovery>(m, "LeaderDiscovery",
                                      "Finds the leading metadata node from bootstrap endpoints (any node's meta or "
                                      "admin port) and calls it, rediscovering on NotLeader or an unreachable node.")
      .def(py::init([](const std::vector<std::string>& endpoints, int max_attempts, int64_t request_timeout_ms,
                       int64_t initial_backoff_ms, int64_t max_backoff_ms) {
             client::LeaderDiscoveryOptions options;
             options.bootstrap = endpoints;
             options.max_attempts = max_attempts;
             options.request_timeout_ms = request_timeout_ms;
             options.initial_backoff_ms = initial_backoff_ms;
             options.max_backoff_ms = max_backoff_ms;
             return std::make_unique<client::LeaderDiscovery>(Runtime::Real(), options);
           }),
           py::arg("endpoints"), py::kw_only(), py::arg("max_attempts") = 10, py::arg("request_timeout_ms") = 2000,
           py::arg("initial_backoff_ms") = 20, py::arg("max_backoff_ms") = 1000)
      .def(
          "leader",
          [](client::LeaderDiscovery& d) {
            Result<std::string> leader = [&] {
              py::gil_scoped_release unlocked;
              return d.Leader();
            }();
            return ValueOrThrow(std::move(leader));
          },
          "The leader's meta endpoint 'host:port' (asks the bootstrap endpoints when none is known).")
      .def("invalidate", &client::LeaderDiscovery::Invalidate, "Forgets the known leader.")
      .def(
          "call_leader",
          [](client::LeaderDiscovery& d, const std::string& call, const py::object& body) {
            const nlohmann::json request = body.is_none() ? nlohmann::json::object() : ToJson(body, "body");
            Result<nlohmann::json> answer = [&] {
              py::gil_scoped_release unlocked;
              return d.CallLeader(call, request);
            }();
            return FromJson(ValueOrThrow(std::move(answer)));
          },
          py::arg("call"), py::arg("body") = py::none(),
          "Calls /api/<call> on the leader with a JSON body (a dict); returns the answer as a dict.")
      .def_property_readonly("discoveries", &client::LeaderDiscovery::discoveries);

  m.def(
      "cluster_info",
      [](const std::string& endpoint, int64_t timeout_ms) {
        Result<nlohmann::json> view = [&] {
          py::gil_scoped_release unlocked;
          return client::FetchClusterView(endpoint, timeout_ms);
        }();
        return FromJson(ValueOrThrow(std::move(view)));
      },
      py::arg("endpoint"), py::arg("timeout_ms") = 2000,
      "One node's cluster view, as `kvchaos cluster info` prints it: self_id, leader_id, leader_endpoint; from an "
      "admin port also state, is_leader, fencing_token, lease_expiry_wall_ms and nodes.");
}

}  // namespace kvchaos::python
