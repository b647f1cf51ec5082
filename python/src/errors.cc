#include "python/src/errors.h"

namespace kvchaos::python {

namespace py = pybind11;

void RegisterErrors(py::module_& m) {
  // Owned by the module (a static would outlive the interpreter and be released after it).
  static PyObject* error_type = nullptr;
  error_type = PyErr_NewExceptionWithDoc("kvchaos.Error",
                                         "A kvchaos call failed: `code` is the Status code name, `message` says "
                                         "what, where and why, `errno` is set when a system call failed.",
                                         PyExc_RuntimeError, nullptr);
  if (error_type == nullptr) throw py::error_already_set();
  m.add_object("Error", py::reinterpret_borrow<py::object>(error_type));

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      const Status& s = e.status();
      py::object error = py::reinterpret_borrow<py::object>(error_type)(py::str(e.what()));
      error.attr("code") = py::str(StatusCodeName(s.code()));
      error.attr("message") = py::str(s.message());
      error.attr("errno") = py::int_(s.sys_errno());
      PyErr_SetObject(error_type, error.ptr());
    }
  });
}

}  // namespace kvchaos::python
