// RecordingMetaClient: a client::MetaClient that passes every call to another one and records it in
// a HistoryRecorder, one record per key (sim/history.h), for the linearizability checker.
//
// Outcomes (docs/history.md): a write (StartWrite, FinishWrite, Remove) that returns an error is
// "unknown" — HttpMetaClient retries after a transport error whose attempt may have applied, and a
// node's write may time out at the meta index after the index applied it — except for the errors
// decided before anything changes (InvalidArgument, NotFound, InvalidConfig, AlreadyExists), which
// are "failed". A read that returns an error is "failed": it returned no value.
#pragma once

#include <functional>
#include <string>

#include "core/client/meta_client.h"
#include "sim/history.h"

namespace kvchaos::sim {

class RecordingMetaClient final : public client::MetaClient {
 public:
  // `caller` names the client of each call (the calling thread); empty: every call is "client".
  RecordingMetaClient(client::MetaClient& inner, HistoryRecorder& recorder, std::function<std::string()> caller = {})
      : inner_(inner), recorder_(recorder), caller_(std::move(caller)) {}

  Result<meta::StorageConfig> GetStorageConfig(const std::string& storage) override;
  Result<meta::WriteSession> StartWrite(std::span<const std::string> keys, const std::string& storage) override;
  Status FinishWrite(const std::string& session_id, std::span<const std::string> keys,
                     std::span<const int64_t> checksums, std::span<const uint8_t> present,
                     std::span<const meta::IovLayout> iov_layouts = {}, int64_t inline_header_version = 0) override;
  Result<std::vector<std::optional<meta::CacheLocation>>> GetLocations(std::span<const std::string> keys) override;
  Status Remove(std::span<const std::string> keys) override;
  // Recorded like GetLocations (with the node and term the answer names).
  Result<client::LocationsRead> ReadLocations(std::span<const std::string> keys) override;

  // The outcome a write's status gives (see above).
  static HistoryOutcome WriteOutcome(const Status& status);

 private:
  HistoryRecord Begin(HistoryOp op, const std::string& key, int64_t invoke_ns) const;

  client::MetaClient& inner_;
  HistoryRecorder& recorder_;
  const std::function<std::string()> caller_;
};

}  // namespace kvchaos::sim
