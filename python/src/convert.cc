#include "python/src/convert.h"

#include <string>

#include "core/common/json_text.h"
#include "python/src/errors.h"

namespace kvchaos::python {

namespace py = pybind11;

py::str Text(std::string_view text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::object FromJson(const nlohmann::json& value) {
  return py::module_::import("json").attr("loads")(Text(DumpJson(value)));
}

nlohmann::json ToJson(const py::handle& value, std::string_view what) {
  std::string text;
  try {
    text = py::module_::import("json").attr("dumps")(value).cast<std::string>();
  } catch (const py::error_already_set& e) {
    throw StatusError(Status::InvalidArgument(std::string(what) + ": not JSON-serialisable: " + e.what()));
  }
  return ValueOrThrow(ParseJsonStrict(text, what));
}

}  // namespace kvchaos::python
