// The checksums of core/integrity on Python buffers: what TransferClient computes at save and
// verifies at load, so a connector can checksum a block itself (and pass it to save(checksums=)).
// A block is a buffer or a sequence of buffers (its IOVs); the GIL is released while computing.
#include <pybind11/pybind11.h>

#include <cstddef>
#include <vector>

#include "core/integrity/checksum.h"
#include "python/src/bindings.h"
#include "python/src/buffers.h"
#include "python/src/errors.h"

namespace kvchaos::python {
namespace {

namespace py = pybind11;

// One block's IOVs, viewed read-only.
std::vector<integrity::Iov> OneBlock(const BlockViews& views) { return views.ConstIovs(0); }

}  // namespace

void RegisterChecksums(py::module_& m) {
  m.def(
      "crc64_full",
      [](const py::object& block) {
        const BlockViews views(py::make_tuple(block), /*writable=*/false);
        const std::vector<integrity::Iov> iovs = OneBlock(views);
        py::gil_scoped_release unlocked;
        return integrity::ComputeCrc64Full(iovs);
      },
      py::arg("block"), "crc64_full of a block (a buffer or a list of buffers, its IOVs), as a signed 64-bit int.");
  m.def(
      "crc32_xor_int64",
      [](const py::object& block, size_t sample_width) {
        const BlockViews views(py::make_tuple(block), /*writable=*/false);
        const std::vector<integrity::Iov> iovs = OneBlock(views);
        Result<int64_t> sum = [&] {
          py::gil_scoped_release unlocked;
          return integrity::ComputeCrc32XorInt64(iovs, sample_width);
        }();
        return ValueOrThrow(std::move(sum));
      },
      py::arg("block"), py::arg("sample_width") = integrity::kDefaultSampleWidth,
      "crc32_xor_int64 of a block (every IOV at least 2 bytes), as a signed 64-bit int.");
}

}  // namespace kvchaos::python
