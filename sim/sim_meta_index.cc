// The simulated meta index service and its client (see the header).
#include "sim/sim_meta_index.h"

#include <algorithm>

namespace kvchaos::sim {
namespace {

using Op = MetaIndexRequest::Op;

const TraceTag& OpTag(Op op) {
  static const TraceTag tags[] = {TraceTag("index.Put"),     TraceTag("index.Delete"), TraceTag("index.Get"),
                                  TraceTag("index.ListKeys"), TraceTag("index.Newest"), TraceTag("index.RaiseFence")};
  return tags[static_cast<size_t>(op)];
}

bool Fenced(Op op) { return op == Op::kPut || op == Op::kDelete || op == Op::kRaiseFence; }

}  // namespace

SimMetaIndex::SimMetaIndex(SimRuntime& runtime, int host, std::function<bool(int, uint64_t)> holds_lock,
                           meta::LocalMetaIndexer::TestingKnobs knobs)
    : runtime_(runtime), host_(host), holds_lock_(std::move(holds_lock)), indexer_(knobs) {}

void SimMetaIndex::Observe(const MetaIndexRequest& r, const Status& status) {
  ++counters_.writes;
  const bool stale = r.token < max_presented_;
  max_presented_ = std::max(max_presented_, r.token);
  if (status.code() == StatusCode::kStaleFencingToken) {
    ++counters_.rejected;
    if (stale) ++counters_.stale_rejected;
    if (holds_lock_ && holds_lock_(r.from_host, r.token)) ++counters_.holder_writes_rejected;
  } else if (status.ok()) {
    ++counters_.accepted;
    if (stale) ++counters_.stale_accepted;
  }
  static constexpr TraceTag kFenceTag("index-fence");
  runtime_.trace().Event(runtime_.true_now(), host_, 0, kFenceTag, static_cast<int64_t>(r.token),
                         static_cast<int64_t>(status.code()), &OpTag(r.op));
}

MetaIndexReply SimMetaIndex::Apply(const MetaIndexRequest& r) {
  MetaIndexReply reply;
  switch (r.op) {
    case Op::kPut:
      reply.status = indexer_.Put(r.token, r.writes);
      break;
    case Op::kDelete:
      reply.status = indexer_.Delete(r.token, r.keys, r.expected_write_ids, r.delete_id);
      break;
    case Op::kRaiseFence:
      reply.status = indexer_.RaiseFence(r.token);
      break;
    case Op::kGet: {
      auto records = indexer_.Get(r.keys);
      reply.status = records.status();
      if (records.ok()) reply.records = std::move(*records);
      break;
    }
    case Op::kListKeys: {
      auto keys = indexer_.ListKeys(r.keys.empty() ? std::string() : r.keys.front());
      reply.status = keys.status();
      if (keys.ok()) reply.keys = std::move(*keys);
      break;
    }
    case Op::kNewest: {
      auto newest = indexer_.NewestFencingToken();
      reply.status = newest.status();
      if (newest.ok()) reply.token = *newest;
      break;
    }
  }
  if (Fenced(r.op)) Observe(r, reply.status);
  return reply;
}

SimMetaIndexClient::SimMetaIndexClient(SimRuntime& runtime, SimNetwork& network, SimMetaIndex& index, int host,
                                       SimMetaIndexClientOptions options)
    : runtime_(runtime), index_(index), host_(host), options_(options), rpc_(runtime, network, host) {}

std::string SimMetaIndexClient::Describe() const { return "sim-meta-index (host " + std::to_string(host_) + ")"; }

MetaIndexReply SimMetaIndexClient::Call(MetaIndexRequest request) {
  request.from_host = host_;
  SimMetaIndex* index = &index_;
  auto serve = [index, request](SimRpc<MetaIndexReply>::Respond respond) { respond(index->Apply(request)); };
  MetaIndexReply reply;
  for (int attempt = 0; attempt <= options_.retry_count; ++attempt) {
    const auto outcome = rpc_.Call(index_.host(), OpTag(request.op), serve,
                                   runtime_.Now() + Millis(options_.timeout_ms), &reply);
    if (outcome == SimRpc<MetaIndexReply>::Outcome::kReplied) return reply;
    if (outcome == SimRpc<MetaIndexReply>::Outcome::kCutOff) {
      return MetaIndexReply{Status::Unavailable("node process is gone"), {}, {}, 0};
    }
  }
  return MetaIndexReply{Status::Timeout("meta index: no answer within " + std::to_string(options_.timeout_ms) +
                                        " ms (" + std::to_string(options_.retry_count + 1) + " attempts)"),
                        {}, {}, 0};
}

Status SimMetaIndexClient::Put(uint64_t fencing_token, std::span<const meta::MetaWrite> writes) {
  MetaIndexRequest r;
  r.op = Op::kPut;
  r.token = fencing_token;
  r.writes.assign(writes.begin(), writes.end());
  return Call(std::move(r)).status;
}

Status SimMetaIndexClient::Delete(uint64_t fencing_token, std::span<const std::string> keys,
                                  std::span<const std::string> expected_write_ids, std::string_view delete_id) {
  MetaIndexRequest r;
  r.op = Op::kDelete;
  r.token = fencing_token;
  r.keys.assign(keys.begin(), keys.end());
  r.expected_write_ids.assign(expected_write_ids.begin(), expected_write_ids.end());
  r.delete_id = delete_id;
  return Call(std::move(r)).status;
}

Result<std::vector<std::optional<meta::MetaRecord>>> SimMetaIndexClient::Get(std::span<const std::string> keys) {
  MetaIndexRequest r;
  r.op = Op::kGet;
  r.keys.assign(keys.begin(), keys.end());
  MetaIndexReply reply = Call(std::move(r));
  if (!reply.status.ok()) return reply.status;
  return std::move(reply.records);
}

Result<std::vector<std::string>> SimMetaIndexClient::ListKeys(std::string_view prefix) {
  MetaIndexRequest r;
  r.op = Op::kListKeys;
  r.keys.emplace_back(prefix);
  MetaIndexReply reply = Call(std::move(r));
  if (!reply.status.ok()) return reply.status;
  return std::move(reply.keys);
}

Result<uint64_t> SimMetaIndexClient::NewestFencingToken() {
  MetaIndexRequest r;
  r.op = Op::kNewest;
  MetaIndexReply reply = Call(std::move(r));
  if (!reply.status.ok()) return reply.status;
  return reply.token;
}

Status SimMetaIndexClient::RaiseFence(uint64_t fencing_token) {
  MetaIndexRequest r;
  r.op = Op::kRaiseFence;
  r.token = fencing_token;
  return Call(std::move(r)).status;
}

}  // namespace kvchaos::sim
