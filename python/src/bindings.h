// The parts of the kvchaos Python module, one file each; module.cc calls them in order.
#pragma once

#include <pybind11/pybind11.h>

#include "core/store/posix_store.h"

namespace kvchaos::python {

void RegisterChecksums(pybind11::module_& m);     // checksum_bindings.cc
void RegisterStore(pybind11::module_& m);         // store_bindings.cc
void RegisterClient(pybind11::module_& m);        // client_bindings.cc
void RegisterCluster(pybind11::module_& m);       // cluster_bindings.cc
void RegisterScenarios(pybind11::module_& m);     // scenario_bindings.cc

// A set-up store's health as a dict: {"ok", "code", "message", "backends": [{path, available,
// window_count, window_failures}], "transitions": [{backend, path, available, source}]}.
// Call with the GIL held; CheckHealth itself only reads a published snapshot.
pybind11::dict StoreHealth(store::PosixStore& store);

}  // namespace kvchaos::python
