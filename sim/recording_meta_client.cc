// Records every meta call of the data plane (see the header).
#include "sim/recording_meta_client.h"

namespace kvchaos::sim {

HistoryOutcome RecordingMetaClient::WriteOutcome(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return HistoryOutcome::kOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kInvalidConfig:
    case StatusCode::kAlreadyExists:
      return HistoryOutcome::kFailed;
    default:
      return HistoryOutcome::kUnknown;
  }
}

HistoryRecord RecordingMetaClient::Begin(HistoryOp op, const std::string& key, int64_t invoke_ns) const {
  HistoryRecord r;
  r.client = caller_ ? caller_() : "client";
  r.op = op;
  r.key = key;
  r.invoke_ns = invoke_ns;
  return r;
}

Result<meta::StorageConfig> RecordingMetaClient::GetStorageConfig(const std::string& storage) {
  return inner_.GetStorageConfig(storage);  // not part of the map
}

Result<meta::WriteSession> RecordingMetaClient::StartWrite(std::span<const std::string> keys,
                                                           const std::string& storage) {
  const int64_t invoke_ns = recorder_.NowNs();
  Result<meta::WriteSession> session = inner_.StartWrite(keys, storage);
  const int64_t complete_ns = recorder_.NowNs();
  const bool answered = session.ok() && session->locations.size() == keys.size() && session->to_write.size() == keys.size();
  for (size_t i = 0; i < keys.size(); ++i) {
    HistoryRecord r = Begin(HistoryOp::kStartWrite, keys[i], invoke_ns);
    r.complete_ns = complete_ns;
    r.storage = storage;
    if (answered) {
      const meta::CacheLocation& loc = session->locations[i];
      r.session = session->session_id;
      r.storage = session->storage;
      r.location = loc.uri;
      r.found = session->to_write[i] == 0;
      if (r.found && loc.checksum_present) r.checksum = loc.checksum;
      r.term = TermOfSession(session->session_id);
    } else {
      r.outcome = session.ok() ? HistoryOutcome::kUnknown : WriteOutcome(session.status());
      r.error = session.ok() ? "answer does not cover every key" : session.status().ToString();
    }
    recorder_.Add(std::move(r));
  }
  return session;
}

Status RecordingMetaClient::FinishWrite(const std::string& session_id, std::span<const std::string> keys,
                                        std::span<const int64_t> checksums, std::span<const uint8_t> present,
                                        std::span<const meta::IovLayout> iov_layouts, int64_t inline_header_version) {
  const int64_t invoke_ns = recorder_.NowNs();
  const Status s = inner_.FinishWrite(session_id, keys, checksums, present, iov_layouts, inline_header_version);
  const int64_t complete_ns = recorder_.NowNs();
  for (size_t i = 0; i < keys.size(); ++i) {
    HistoryRecord r = Begin(HistoryOp::kFinishWrite, keys[i], invoke_ns);
    r.complete_ns = complete_ns;
    r.session = session_id;
    r.term = TermOfSession(session_id);
    if (i < checksums.size() && (present.empty() || (i < present.size() && present[i] != 0))) r.checksum = checksums[i];
    r.outcome = WriteOutcome(s);
    if (!s.ok()) r.error = s.ToString();
    recorder_.Add(std::move(r));
  }
  return s;
}

Result<std::vector<std::optional<meta::CacheLocation>>> RecordingMetaClient::GetLocations(
    std::span<const std::string> keys) {
  Result<client::LocationsRead> read = ReadLocations(keys);
  if (!read.ok()) return read.status();
  return std::move(read->locations);
}

Result<client::LocationsRead> RecordingMetaClient::ReadLocations(std::span<const std::string> keys) {
  const int64_t invoke_ns = recorder_.NowNs();
  Result<client::LocationsRead> read = inner_.ReadLocations(keys);
  const int64_t complete_ns = recorder_.NowNs();
  const bool answered = read.ok() && read->locations.size() == keys.size();
  for (size_t i = 0; i < keys.size(); ++i) {
    HistoryRecord r = Begin(HistoryOp::kGetLocation, keys[i], invoke_ns);
    r.complete_ns = complete_ns;
    if (answered) {
      const std::optional<meta::CacheLocation>& loc = read->locations[i];
      r.node = read->served_by;
      if (read->term > 0) r.term = static_cast<int64_t>(read->term);
      r.found = loc.has_value();
      if (loc) {
        r.storage = loc->storage;
        r.location = loc->uri;
        if (loc->checksum_present) r.checksum = loc->checksum;
      }
    } else {
      r.outcome = HistoryOutcome::kFailed;  // no value came back: it constrains nothing
      r.error = read.ok() ? "answer does not cover every key" : read.status().ToString();
    }
    recorder_.Add(std::move(r));
  }
  return read;
}

Status RecordingMetaClient::Remove(std::span<const std::string> keys) {
  const int64_t invoke_ns = recorder_.NowNs();
  const Status s = inner_.Remove(keys);
  const int64_t complete_ns = recorder_.NowNs();
  for (const std::string& key : keys) {
    HistoryRecord r = Begin(HistoryOp::kRemove, key, invoke_ns);
    r.complete_ns = complete_ns;
    r.outcome = WriteOutcome(s);
    if (!s.ok()) r.error = s.ToString();
    recorder_.Add(std::move(r));
  }
  return s;
}

}  // namespace kvchaos::sim
