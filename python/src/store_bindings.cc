// kvchaos.PosixStore: a store::PosixStore set up from a store config (core/store/store.example.yaml),
// for a service that wants its health (the startup probe of every backend path, the health window
// of each, the transitions so far) without the meta service. CacheClient.store_health() gives the
// same dict for the store a client runs on.
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "core/store/posix_store.h"
#include "core/store/store_config.h"
#include "core/store/store_metrics.h"
#include "python/src/bindings.h"
#include "python/src/convert.h"
#include "python/src/errors.h"

namespace kvchaos::python {

namespace py = pybind11;

py::dict StoreHealth(store::PosixStore& store) {
  const Status health = store.CheckHealth();
  py::dict out;
  out["ok"] = health.ok();
  out["code"] = StatusCodeName(health.code());
  out["message"] = Text(health.message());
  py::list backends;
  for (const store::BackendStatus& b : store.BackendStates()) {
    py::dict d;
    d["path"] = Text(b.path);
    d["available"] = b.available;
    d["window_count"] = b.window_count;
    d["window_failures"] = b.window_failures;
    backends.append(d);
  }
  out["backends"] = backends;
  py::list transitions;
  for (const store::HealthTransition& t : store.Transitions()) {
    py::dict d;
    d["backend"] = t.backend;
    d["path"] = Text(t.path);
    d["available"] = t.available;
    d["source"] = t.source == store::SampleSource::kProbe ? "probe" : "business";
    transitions.append(d);
  }
  out["transitions"] = transitions;
  return out;
}

namespace {

std::unique_ptr<store::PosixStore> SetUp(Result<store::PosixStoreConfig> config) {
  const store::PosixStoreConfig cfg = ValueOrThrow(std::move(config));
  auto posix = std::make_unique<store::PosixStore>();
  Status s;
  {
    py::gil_scoped_release unlocked;  // probes every backend path
    s = posix->Setup(cfg);
  }
  ThrowIfError(s);
  return posix;
}

}  // namespace

void RegisterStore(py::module_& m) {
  py::class_<store::PosixStore>(m, "PosixStore",
                                "A PosixStore set up from a store config: Setup probes every backend path and "
                                "fails (kvchaos.Error) when none is usable or the config is invalid.")
      .def_static(
          "open", [](const std::string& path) { return SetUp(store::LoadStoreConfig(path)); }, py::arg("path"),
          "Sets up the store a YAML config file describes.")
      .def_static(
          "from_yaml",
          [](const std::string& text, const std::string& name) { return SetUp(store::ParseStoreConfig(text, name)); },
          py::arg("text"), py::arg("name") = "<yaml>", "Sets up the store a YAML text describes.")
      .def("health", &StoreHealth,
           "{'ok', 'code', 'message', 'backends': [{path, available, window_count, window_failures}], "
           "'transitions': [{backend, path, available, source}]}")
      .def(
          "metrics",
          [](store::PosixStore& s) {
            MetricsRegistry registry;
            store::WriteStoreMetrics(s, registry);
            return registry.Render();
          },
          "The store's health metrics in the Prometheus text format (core/store/store_metrics.h).")
      .def(
          "check_health", [](store::PosixStore& s) { ThrowIfError(s.CheckHealth()); },
          "Raises kvchaos.Error (StoreUnhealthy) when no backend is available.")
      .def_property_readonly("config",
                             [](const store::PosixStore& s) { return FromJson(store::StoreConfigToJson(s.config())); },
                             "Every key with the value the store runs with (as `kvchaos store check` prints it).");
}

}  // namespace kvchaos::python
