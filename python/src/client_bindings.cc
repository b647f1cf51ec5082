// kvchaos.CacheClient: client::CacheClient (core/client/cache_client.h) for Python. save/load take
// blocks as buffers (buffers.h: no copy in or out) and release the GIL for the whole transfer, so
// other Python threads run while the store does I/O. The checksum mismatches a load saw come back
// in its result as event dicts (and are counted by mismatch_counts()).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/client/cache_client.h"
#include "core/client/client_metrics.h"
#include "core/common/metrics.h"
#include "python/src/bindings.h"
#include "python/src/buffers.h"
#include "python/src/convert.h"
#include "python/src/errors.h"

namespace kvchaos::python {
namespace {

namespace py = pybind11;

struct PySaveResult {
  std::vector<bool> written;
  std::vector<int64_t> checksums;
};

// The mismatch events of a load are its result's (LoadResult::mismatches); a save that sees one
// fails, and raises.
struct PyLoadResult {
  Status status;
  client::LoadResult detail;
};

std::vector<bool> Flags(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

std::vector<std::string> Keys(const py::handle& keys) {
  if (py::isinstance<py::str>(keys) || !py::isinstance<py::sequence>(keys)) {
    throw py::type_error("keys: a sequence of str is needed");
  }
  return keys.cast<std::vector<std::string>>();
}

// Owns the client; close() (or leaving a `with` block) stops its store's threads at once.
class PyCacheClient {
 public:
  static std::unique_ptr<PyCacheClient> Open(Result<client::CacheClientConfig> config, bool verify_meta_round_trip,
                                             bool drop_lost_entries) {
    client::CacheClientConfig cfg = ValueOrThrow(std::move(config));
    client::TransferClientOptions options;
    options.verify_meta_round_trip = verify_meta_round_trip;
    options.drop_lost_entries = drop_lost_entries;
    Result<std::unique_ptr<client::CacheClient>> opened = [&] {
      py::gil_scoped_release unlocked;  // probes every backend path, may reach cluster nodes
      return client::CacheClient::Open(std::move(cfg), std::move(options));
    }();
    auto out = std::make_unique<PyCacheClient>();
    out->client_ = std::shared_ptr<client::CacheClient>(ValueOrThrow(std::move(opened)));
    return out;
  }

  ~PyCacheClient() { Close(); }

  // A call holds the client while it runs without the GIL, so a close() from another thread only
  // drops this object's share.
  std::shared_ptr<client::CacheClient> Hold() const {
    if (client_ == nullptr) throw StatusError(Status::InvalidArgument("CacheClient: used after close()"));
    return client_;
  }
  client::CacheClient& Get() const { return *Hold(); }

  void Close() {
    py::gil_scoped_release unlocked;  // joins the store's threads
    client_.reset();
  }

  PySaveResult Save(const py::handle& keys, const py::handle& blocks, const std::optional<std::vector<int64_t>>& sums) {
    const std::vector<std::string> k = Keys(keys);
    const BlockViews views(blocks, /*writable=*/false);
    const std::shared_ptr<client::CacheClient> c = Hold();
    Result<client::SaveResult> saved = [&] {
      py::gil_scoped_release unlocked;
      return c->transfer().Save(k, views.iovs(), sums ? &*sums : nullptr);
    }();
    client::SaveResult r = ValueOrThrow(std::move(saved));
    return {Flags(r.written), std::move(r.checksums)};
  }

  PyLoadResult Load(const py::handle& keys, const py::handle& blocks) {
    const std::vector<std::string> k = Keys(keys);
    const BlockViews views(blocks, /*writable=*/true);
    const std::shared_ptr<client::CacheClient> c = Hold();
    client::LoadResult r = [&] {
      py::gil_scoped_release unlocked;
      return c->Load(k, views.iovs());
    }();
    // A status that no per-block outcome explains (bad arguments, meta or store down) fails the
    // call; mismatches, misses and layout differences are the result's to report.
    if (!r.status.ok() && r.faulty.empty() && r.missing.empty() && r.layout_mismatch.empty() && r.misrouted.empty() &&
        r.corrupt_header.empty()) {
      throw StatusError(r.status);
    }
    Status status = r.status;
    return {std::move(status), std::move(r)};
  }

 private:
  std::shared_ptr<client::CacheClient> client_;
};

py::dict EventDict(const client::ChecksumMismatchEvent& e) {
  py::dict d;
  d["key"] = Text(e.key);
  d["storage"] = Text(e.storage);
  d["location"] = Text(e.location);
  d["algo"] = Text(integrity::ChecksumAlgoName(e.algo));
  d["stage"] = Text(integrity::VerifyStageName(e.stage));
  d["expected"] = e.expected;
  d["actual"] = e.actual;
  return d;
}

py::list Events(const std::vector<client::ChecksumMismatchEvent>& events) {
  py::list out;
  for (const client::ChecksumMismatchEvent& e : events) out.append(EventDict(e));
  return out;
}

}  // namespace

void RegisterClient(py::module_& m) {
  py::class_<PySaveResult>(m, "SaveResult", "What save() did, per key.")
      .def_readonly("written", &PySaveResult::written, "per key: True written now, False already cached")
      .def_readonly("checksums", &PySaveResult::checksums, "per written key, when the storage keeps checksums")
      .def("__repr__", [](const PySaveResult& r) {
        size_t n = 0;
        for (bool w : r.written) n += w ? 1 : 0;
        return "<SaveResult written " + std::to_string(n) + "/" + std::to_string(r.written.size()) + ">";
      });

  py::class_<PyLoadResult>(m, "LoadResult",
                           "What load() found, per block. After a mismatch, the buffers of `faulty` blocks hold what "
                           "was read and must be discarded.")
      .def_property_readonly("ok", [](const PyLoadResult& r) { return r.status.ok(); })
      .def_property_readonly("code", [](const PyLoadResult& r) { return StatusCodeName(r.status.code()); },
                             "Status code name: OK, InlineHeaderInvalid (misrouted read), Corruption (damaged inline "
                             "header), ChecksumMismatch, NotFound, InvalidArgument (layout mismatch)")
      .def_property_readonly("message", [](const PyLoadResult& r) { return Text(r.status.message()); })
      .def_property_readonly("faulty", [](const PyLoadResult& r) { return r.detail.faulty; })
      .def_property_readonly("missing", [](const PyLoadResult& r) { return r.detail.missing; })
      .def_property_readonly("lost", [](const PyLoadResult& r) { return r.detail.lost; })
      .def_property_readonly("verified", [](const PyLoadResult& r) { return Flags(r.detail.verified); })
      .def_property_readonly("layout_mismatch", [](const PyLoadResult& r) { return r.detail.layout_mismatch; })
      .def_property_readonly("misrouted", [](const PyLoadResult& r) { return r.detail.misrouted; },
                             "blocks whose inline header names another key (code InlineHeaderInvalid)")
      .def_property_readonly("corrupt_header", [](const PyLoadResult& r) { return r.detail.corrupt_header; },
                             "blocks whose inline header is damaged (code Corruption)")
      .def_property_readonly("torn", [](const PyLoadResult& r) { return r.detail.torn; },
                             "of `missing`: blocks whose inline header says another data length")
      .def_property_readonly("mismatches", [](const PyLoadResult& r) { return Events(r.detail.mismatches); },
                             "checksum mismatch events (dicts: key, storage, location, algo, stage, expected, actual)")
      .def("check", [](const PyLoadResult& r) { ThrowIfError(r.status); },
           "Raises kvchaos.Error unless every block loaded and verified where a checksum is stored.")
      .def("__repr__", [](const PyLoadResult& r) {
        return "<LoadResult " + StatusCodeName(r.status.code()) + " faulty=" + std::to_string(r.detail.faulty.size()) +
               " missing=" + std::to_string(r.detail.missing.size()) + ">";
      });

  py::class_<PyCacheClient>(m, "CacheClient",
                            "client::CacheClient: a PosixStore and a meta service (in-process or cluster nodes) from one "
                            "config; save/load with end-to-end checksums.")
      .def_static(
          "open",
          [](const std::string& path, bool verify_meta_round_trip, bool drop_lost_entries) {
            return PyCacheClient::Open(client::LoadCacheClientConfig(path), verify_meta_round_trip, drop_lost_entries);
          },
          py::arg("path"), py::kw_only(), py::arg("verify_meta_round_trip") = false,
          py::arg("drop_lost_entries") = true, "Opens the client a YAML config file describes.")
      .def_static(
          "from_yaml",
          [](const std::string& text, const std::string& name, bool verify_meta_round_trip, bool drop_lost_entries) {
            return PyCacheClient::Open(client::ParseCacheClientConfig(text, name), verify_meta_round_trip,
                                       drop_lost_entries);
          },
          py::arg("text"), py::arg("name") = "<yaml>", py::kw_only(), py::arg("verify_meta_round_trip") = false,
          py::arg("drop_lost_entries") = true, "Opens the client a YAML text describes (`name` in its errors).")
      .def("save", &PyCacheClient::Save, py::arg("keys"), py::arg("blocks"), py::arg("checksums") = py::none(),
           "Saves blocks (each a buffer or a list of buffers adding up to block_size). `checksums`: the caller's, "
           "compared first; nothing is written on a difference.")
      .def("load", &PyCacheClient::Load, py::arg("keys"), py::arg("blocks"),
           "Loads blocks into writable buffers and verifies them; returns a LoadResult.")
      .def("mismatch_counts", [](PyCacheClient& c) { return c.Get().transfer().MismatchCounts(); },
           "Checksum mismatches seen so far, per storage.")
      .def("store_health", [](PyCacheClient& c) { return StoreHealth(c.Get().posix_store()); })
      .def(
          "metrics",
          [](PyCacheClient& c) {
            MetricsRegistry registry;
            client::WriteCacheClientMetrics(c.Get(), registry);
            return registry.Render();
          },
          "The client's and its store's metrics in the Prometheus text format (core/client/client_metrics.h).")
      .def_property_readonly("block_size", [](PyCacheClient& c) { return c.Get().block_size(); })
      .def_property_readonly("shard_size", [](PyCacheClient& c) { return c.Get().transfer().shard_size(); })
      .def_property_readonly("storage", [](PyCacheClient& c) { return Text(c.Get().config().storage); })
      .def("close", &PyCacheClient::Close, "Stops the client now (also at the end of a `with` block).")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyCacheClient& c, const py::args&) { c.Close(); });
}

}  // namespace kvchaos::python
