// Caller buffers without copies, through Python's buffer protocol (bytearray, memoryview, numpy
// arrays; a torch CPU tensor through .numpy()): a view pins the object's memory (a bytearray
// cannot be resized while viewed) so the C++ side may read or fill it with the GIL released.
//
// A block is one buffer (one IOV) or a sequence of buffers (its IOVs in order). Buffers must be
// C-contiguous; load needs writable ones. A buffer that is neither is refused with the block and
// IOV it is in.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "core/integrity/checksum.h"

namespace kvchaos::python {

// One Py_buffer held for the view's lifetime (created and destroyed with the GIL held).
class BufferView {
 public:
  // `where` names the buffer in errors ("block 2 iov 0").
  BufferView(const pybind11::handle& object, bool writable, const std::string& where);
  ~BufferView();
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;

  std::span<std::byte> bytes() const {
    return {static_cast<std::byte*>(view_.buf), static_cast<size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

// The IOVs of many blocks, viewed; spans stay valid while this object lives.
class BlockViews {
 public:
  // `blocks`: a sequence of blocks, each a buffer or a sequence of buffers.
  BlockViews(const pybind11::handle& blocks, bool writable);

  size_t size() const { return iovs_.size(); }
  // One block as the store's IOVs (writable spans; read-only buffers are only ever read).
  const std::vector<std::vector<std::span<std::byte>>>& iovs() const { return iovs_; }
  // One block as the checksum functions take it.
  std::vector<integrity::Iov> ConstIovs(size_t block) const;

 private:
  std::deque<BufferView> views_;  // never moved: each holds its Py_buffer until destroyed
  std::vector<std::vector<std::span<std::byte>>> iovs_;
};

// True when `object` offers the buffer protocol (so it is one IOV, not a sequence of them).
bool IsBuffer(const pybind11::handle& object);

}  // namespace kvchaos::python
