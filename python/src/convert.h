// Values from C++ to Python: text that may not be UTF-8 (file names, messages quoting input) and
// JSON documents (run results, cluster views), which become plain dicts and lists.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>
#include <string_view>

namespace kvchaos::python {

// A str; bytes that are not UTF-8 come out as U+FFFD instead of raising.
pybind11::str Text(std::string_view text);

// The JSON value as Python objects (json.loads of its text: dict, list, str, int, float, bool, None).
pybind11::object FromJson(const nlohmann::json& value);
// A Python value made of those types as JSON (json.dumps, then parsed); InvalidArgument naming
// `what` when it is not JSON-serialisable.
nlohmann::json ToJson(const pybind11::handle& value, std::string_view what);

}  // namespace kvchaos::python
