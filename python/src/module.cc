// The kvchaos Python module: the embedding API of kvchaos::core (CacheClient save/load with
// end-to-end checksums, the checksums themselves, PosixStore health, leader discovery) and the
// scenario runner, for services and test suites written in Python. python/README.md documents it.
#include <pybind11/pybind11.h>

#include "core/common/logging.h"
#include "core/common/version.h"
#include "python/src/bindings.h"
#include "python/src/errors.h"

PYBIND11_MODULE(kvchaos, m) {
  m.doc() = "kvchaos: a KV-cache block store with end-to-end checksums, and the harness that attacks it";
  m.attr("__version__") = kvchaos::kVersion;
  // KVCHAOS_LOG sets the level (default info), as for the kvchaos binary.
  kvchaos::InitLogging();
  m.def(
      "set_log_level", [](const std::string& level) { kvchaos::python::ThrowIfError(kvchaos::SetLogLevel(level)); },
      pybind11::arg("level"), "trace, debug, info, warn, error or off.");
  kvchaos::python::RegisterErrors(m);
  kvchaos::python::RegisterChecksums(m);
  kvchaos::python::RegisterStore(m);
  kvchaos::python::RegisterClient(m);
  kvchaos::python::RegisterCluster(m);
  kvchaos::python::RegisterScenarios(m);
}
