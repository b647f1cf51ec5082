#include "python/src/buffers.h"

#include <utility>

namespace kvchaos::python {

namespace py = pybind11;

BufferView::BufferView(const py::handle& object, bool writable, const std::string& where) {
  const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) {
    // The interpreter's own reason (read-only, not contiguous, no buffer protocol), with the place.
    py::error_already_set cause;
    throw py::type_error(where + ": a " + (writable ? "writable " : "") + "C-contiguous buffer is needed (" +
                         py::str(object.get_type().attr("__name__")).cast<std::string>() + "): " + cause.what());
  }
  held_ = true;
}

BufferView::~BufferView() {
  if (held_) PyBuffer_Release(&view_);
}

bool IsBuffer(const py::handle& object) { return PyObject_CheckBuffer(object.ptr()) == 1; }

BlockViews::BlockViews(const py::handle& blocks, bool writable) {
  if (IsBuffer(blocks) || !py::isinstance<py::sequence>(blocks)) {
    throw py::type_error("blocks: a sequence of blocks is needed (each a buffer or a sequence of buffers)");
  }
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(blocks);
  iovs_.reserve(seq.size());
  for (size_t b = 0; b < seq.size(); ++b) {
    const py::object block = seq[b];
    std::vector<std::span<std::byte>> iovs;
    if (IsBuffer(block)) {
      views_.emplace_back(block, writable, "block " + std::to_string(b));
      iovs.push_back(views_.back().bytes());
    } else if (py::isinstance<py::sequence>(block) && !py::isinstance<py::str>(block)) {
      const py::sequence parts = py::reinterpret_borrow<py::sequence>(block);
      for (size_t i = 0; i < parts.size(); ++i) {
        views_.emplace_back(parts[i], writable, "block " + std::to_string(b) + " iov " + std::to_string(i));
        iovs.push_back(views_.back().bytes());
      }
    } else {
      throw py::type_error("block " + std::to_string(b) + ": a buffer or a sequence of buffers is needed, not " +
                           py::str(block.get_type().attr("__name__")).cast<std::string>());
    }
    iovs_.push_back(std::move(iovs));
  }
}

std::vector<integrity::Iov> BlockViews::ConstIovs(size_t block) const {
  return {iovs_[block].begin(), iovs_[block].end()};
}

}  // namespace kvchaos::python
