// SimEtcd: raft leadership at cluster level, a revisioned KV and leases, answered as etcd's v3
// JSON gateway answers (see the header).
#include "sim/sim_etcd.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "core/common/base64.h"

namespace kvchaos::sim {
namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr const char* kKeepAlivePath = "/v3/lease/keepalive";

// gRPC codes etcd answers with.
constexpr int kInvalidArgument = 3;
constexpr int kNotFound = 5;
constexpr int kFailedPrecondition = 9;
constexpr int kUnimplemented = 12;
constexpr int kUnavailable = 14;

// The HTTP status grpc-gateway gives a gRPC code.
int HttpStatusOf(int grpc_code) {
  switch (grpc_code) {
    case kInvalidArgument:
    case kFailedPrecondition:
      return 400;
    case kNotFound:
    case kUnimplemented:
      return 404;
    case kUnavailable:
      return 503;
    default:
      return 500;
  }
}

// proto3 JSON: int64 as a decimal string (a JSON integer is taken too); absent is 0.
int64_t I64(const nlohmann::json& r, const char* field) {
  if (!r.is_object() || !r.contains(field)) return 0;
  const nlohmann::json& v = r[field];
  if (v.is_number_integer()) return v.get<int64_t>();
  if (!v.is_string()) return 0;
  const std::string& s = v.get_ref<const std::string&>();
  int64_t out = 0;
  std::from_chars(s.data(), s.data() + s.size(), out);
  return out;
}

// bytes fields are base64; absent (or not base64) is empty.
std::string Bytes(const nlohmann::json& r, const char* field) {
  if (!r.is_object() || !r.contains(field) || !r[field].is_string()) return {};
  return Base64Decode(r[field].get_ref<const std::string&>()).value_or(std::string());
}

bool Flag(const nlohmann::json& r, const char* field) {
  return r.is_object() && r.contains(field) && r[field].is_boolean() && r[field].get<bool>();
}

template <typename T>
bool Holds(const std::string& result, const T& actual, const T& wanted) {
  if (result == "NOT_EQUAL") return actual != wanted;
  if (result == "GREATER") return actual > wanted;
  if (result == "LESS") return actual < wanted;
  return actual == wanted;  // EQUAL, proto3's default
}

}  // namespace

SimEtcd::SimEtcd(SimRuntime& runtime, std::vector<int> hosts, Rng rng, SimEtcdOptions options)
    : runtime_(runtime), rng_(std::move(rng)), options_(options) {
  if (hosts.empty()) throw std::invalid_argument("SimEtcd: a cluster needs at least one member");
  if (options.election_timeout_min_ns <= 0 || options.election_timeout_max_ns < options.election_timeout_min_ns ||
      options.vote_max_ns < 0 || options.min_ttl_s < 1 || options.revoke_delay_max_ns < 0) {
    throw std::invalid_argument("SimEtcd: election timeouts need 0 < min <= max; min_ttl_s >= 1; delays >= 0");
  }
  for (int h : hosts) members_.push_back(Member{h, true, false, {}, -1});
  cut_.assign(members_.size(), std::vector<bool>(members_.size(), false));
  // Already up when the run starts: the first leader is there at once.
  leader_ = static_cast<int>(rng_.Uniform(members_.size()));
  term_ = 1;
  ++counters_.elections;
  Note(leader_, "etcd-leader", leader_, static_cast<int64_t>(term_));
}

int SimEtcd::MemberOnHost(int h) const {
  for (int m = 0; m < members(); ++m) {
    if (host(m) == h) return m;
  }
  return -1;
}

void SimEtcd::Note(int member, std::string_view what, int64_t a, int64_t b) {
  runtime_.trace().Event(runtime_.true_now(), member >= 0 ? host(member) : -1, 0, what, a, b);
}

bool SimEtcd::Alive(int m) const {
  const Member& x = members_[static_cast<size_t>(m)];
  return x.up && !x.paused;
}

bool SimEtcd::Connected(int a, int b) const {
  return Alive(a) && Alive(b) && (a == b || !cut_[static_cast<size_t>(a)][static_cast<size_t>(b)]);
}

bool SimEtcd::HasQuorum(int m) const {
  int reach = 0;
  for (int j = 0; j < members(); ++j) reach += Connected(m, j) ? 1 : 0;
  return reach >= members() / 2 + 1;
}

void SimEtcd::Reconsider() {
  const TrueNs now = runtime_.true_now();
  if (leader_ >= 0 && !HasQuorum(leader_)) {
    // The others stop hearing it (or it steps down without a quorum, etcd's CheckQuorum).
    Note(leader_, "etcd-leader-lost", static_cast<int64_t>(term_));
    leader_ = -1;
    for (Member& m : members_) {
      if (m.lost_leader_at < 0) m.lost_leader_at = now;
    }
    ArmElection(/*after_loss=*/true);
    return;
  }
  if (leader_ >= 0) {
    for (int m = 0; m < members(); ++m) {
      Member& x = members_[static_cast<size_t>(m)];
      if (Connected(m, leader_)) {
        x.lost_leader_at = -1;
      } else if (x.lost_leader_at < 0) {
        x.lost_leader_at = now;
      }
    }
    return;
  }
  bool majority = false;
  for (int m = 0; m < members(); ++m) majority = majority || HasQuorum(m);
  if (!election_armed_ && majority) ArmElection(/*after_loss=*/false);
}

void SimEtcd::ArmElection(bool after_loss) {
  election_armed_ = true;
  after_loss_ = after_loss;
  const uint64_t generation = ++election_generation_;
  // Two statements: the operands of one `+` are drawn in an order each compiler picks.
  const int64_t timeout = rng_.UniformInt(options_.election_timeout_min_ns, options_.election_timeout_max_ns - 1);
  const int64_t delay = timeout + rng_.UniformInt(0, options_.vote_max_ns);
  Note(-1, "etcd-election-armed", delay, after_loss ? 1 : 0);
  runtime_.At(runtime_.true_now() + delay, [this, generation] { Elect(generation); });
}

void SimEtcd::Elect(uint64_t generation) {
  if (generation != election_generation_ || !election_armed_) return;
  election_armed_ = false;
  after_loss_ = false;
  if (leader_ >= 0) return;
  std::vector<int> candidates;
  for (int m = 0; m < members(); ++m) {
    if (HasQuorum(m)) candidates.push_back(m);
  }
  if (candidates.empty()) {
    Note(-1, "etcd-no-quorum", static_cast<int64_t>(term_));  // until a member or link comes back
    return;
  }
  leader_ = candidates[rng_.Uniform(candidates.size())];
  ++term_;
  ++counters_.elections;
  Note(leader_, "etcd-leader", leader_, static_cast<int64_t>(term_));
  for (int m = 0; m < members(); ++m) {
    if (Connected(m, leader_)) members_[static_cast<size_t>(m)].lost_leader_at = -1;
  }
  // etcd's lessor, promoted, gives every lease a fresh TTL: none expires for lack of a leader.
  for (auto& [id, lease] : leases_) RefreshLease(id, lease);
}

SimEtcd::Reach SimEtcd::ReachOf(int member) const {
  if (leader_ >= 0 && Connected(member, leader_)) return Reach::kServe;
  if (leader_ >= 0) {
    // Cut from the leader: it believes in it for an election timeout, then knows it has none.
    const TrueNs lost = members_[static_cast<size_t>(member)].lost_leader_at;
    return runtime_.true_now() - lost < options_.election_timeout_min_ns ? Reach::kHang : Reach::kNoLeader;
  }
  return election_armed_ && after_loss_ ? Reach::kHang : Reach::kNoLeader;
}

void SimEtcd::Crash(int member) {
  Member& m = members_[static_cast<size_t>(member)];
  if (!m.up) return;
  m.up = false;
  m.held.clear();  // what it held dies with it: the callers time out
  Note(member, "etcd-crash");
  Reconsider();
}

void SimEtcd::Restart(int member) {
  Member& m = members_[static_cast<size_t>(member)];
  if (m.up) return;
  m.up = true;
  Note(member, "etcd-restart");
  Reconsider();
}

void SimEtcd::Pause(int member) {
  Member& m = members_[static_cast<size_t>(member)];
  if (m.paused || !m.up) return;
  m.paused = true;
  Note(member, "etcd-pause");
  Reconsider();
}

void SimEtcd::Resume(int member) {
  Member& m = members_[static_cast<size_t>(member)];
  if (!m.paused) return;
  m.paused = false;
  Note(member, "etcd-resume", static_cast<int64_t>(m.held.size()));
  Reconsider();
  // What reached it while frozen is handled now, in arrival order (their callers may be gone).
  auto held = std::move(m.held);
  m.held.clear();
  for (const HeldRequest& r : held) Answer(member, r.path, r.body, r.respond);
}

void SimEtcd::CutPeers(int a, int b, bool cut) {
  cut_[static_cast<size_t>(a)][static_cast<size_t>(b)] = cut;
  cut_[static_cast<size_t>(b)][static_cast<size_t>(a)] = cut;
  Note(a, cut ? "etcd-peers-cut" : "etcd-peers-healed", b);
  Reconsider();
}

void SimEtcd::Serve(int member, const std::string& path, const std::string& body, Respond respond) {
  ++counters_.requests;
  Member& m = members_[static_cast<size_t>(member)];
  if (!m.up) {
    ++counters_.refused;
    Note(member, "etcd-refused");
    respond(EtcdAnswer{true, 0, {}});
    return;
  }
  if (m.paused) {
    Note(member, "etcd-held");
    m.held.push_back(HeldRequest{path, body, std::move(respond)});
    return;
  }
  Answer(member, path, body, respond);
}

void SimEtcd::Answer(int member, const std::string& path, const std::string& body, const Respond& respond) {
  const bool stream = path == kKeepAlivePath;
  Reply reply;
  switch (ReachOf(member)) {
    case Reach::kHang:
      ++counters_.unanswered;
      Note(member, "etcd-unanswered");
      return;
    case Reach::kNoLeader:
      ++counters_.no_leader;
      reply = Reply{kUnavailable, "etcdserver: no leader", {}};
      break;
    case Reach::kServe: {
      const nlohmann::json request = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
      if (!request.is_object()) {
        reply = Reply{kInvalidArgument, "the request body is not a JSON object", {}};
      } else {
        reply = Apply(path, request);
      }
      break;
    }
  }
  runtime_.trace().Event(runtime_.true_now(), host(member), 0, "etcd-apply", reply.grpc_code, revision_, path);
  EtcdAnswer answer;
  if (reply.grpc_code != 0) {
    if (stream) {  // an error on a stream: 200, then the error as the stream's message
      answer.http_status = 200;
      answer.body = nlohmann::json{{"error",
                                    {{"grpc_code", reply.grpc_code},
                                     {"http_code", HttpStatusOf(reply.grpc_code)},
                                     {"message", reply.message}}}}
                        .dump() + "\n";
    } else {
      answer.http_status = HttpStatusOf(reply.grpc_code);
      answer.body =
          nlohmann::json{{"error", reply.message}, {"code", reply.grpc_code}, {"message", reply.message}}.dump();
    }
  } else {
    reply.json["header"] = Header();
    answer.http_status = 200;
    answer.body = stream ? nlohmann::json{{"result", reply.json}}.dump() + "\n" : reply.json.dump();
  }
  respond(std::move(answer));
}

SimEtcd::Reply SimEtcd::Apply(const std::string& path, const nlohmann::json& r) {
  EtcdCommit commit;
  Reply reply;
  if (path == "/v3/kv/range") {
    reply = Range(r);
  } else if (path == "/v3/kv/put") {
    reply = Put(r, &commit);
  } else if (path == "/v3/kv/deleterange") {
    reply = DeleteRange(r, &commit);
  } else if (path == "/v3/kv/txn") {
    reply = Txn(r, &commit);
  } else if (path == "/v3/lease/grant") {
    reply = LeaseGrant(r);
  } else if (path == "/v3/lease/revoke" || path == "/v3/kv/lease/revoke") {
    reply = LeaseRevoke(r, &commit);
  } else if (path == kKeepAlivePath) {
    reply = LeaseKeepAlive(r, &commit);
  } else if (path == "/v3/lease/timetolive" || path == "/v3/kv/lease/timetolive") {
    reply = LeaseTimeToLive(r);
  } else {
    reply = Reply{kUnimplemented, "Not Found (" + path + " is not modelled)", {}};
  }
  Commit(&commit);
  return reply;
}

void SimEtcd::Commit(EtcdCommit* commit) {
  if (commit->changes.empty()) return;
  ++revision_;  // a request's writes share one revision
  commit->revision = revision_;
  if (commit_hook_) commit_hook_(*commit);
}

nlohmann::json SimEtcd::Header() const {
  return {{"cluster_id", "14841639068965178418"},
          {"member_id", std::to_string(10276657743932975437ULL + static_cast<uint64_t>(std::max(leader_, 0)))},
          {"revision", std::to_string(revision_)},
          {"raft_term", std::to_string(term_)}};
}

nlohmann::json SimEtcd::KvJson(const std::string& key, const Kv& kv) const {
  nlohmann::json j = {{"key", Base64Encode(key)},
                      {"create_revision", std::to_string(kv.create_revision)},
                      {"mod_revision", std::to_string(kv.mod_revision)},
                      {"version", std::to_string(kv.version)}};
  if (!kv.value.empty()) j["value"] = Base64Encode(kv.value);
  if (kv.lease != 0) j["lease"] = std::to_string(kv.lease);
  return j;
}

SimEtcd::Reply SimEtcd::Range(const nlohmann::json& r) const {
  const std::string key = Bytes(r, "key");
  const std::string end = Bytes(r, "range_end");
  const int64_t limit = I64(r, "limit");
  std::vector<std::map<std::string, Kv>::const_iterator> found;
  if (end.empty()) {
    if (auto it = kvs_.find(key); it != kvs_.end()) found.push_back(it);
  } else {
    const bool to_last = end == std::string(1, '\0');  // every key from `key` on
    for (auto it = kvs_.lower_bound(key); it != kvs_.end() && (to_last || it->first < end); ++it) found.push_back(it);
  }
  nlohmann::json out = nlohmann::json::object();
  if (!Flag(r, "count_only")) {
    nlohmann::json kvs = nlohmann::json::array();
    for (size_t i = 0; i < found.size() && (limit <= 0 || static_cast<int64_t>(i) < limit); ++i) {
      kvs.push_back(KvJson(found[i]->first, found[i]->second));
    }
    if (!kvs.empty()) out["kvs"] = kvs;
  }
  if (limit > 0 && static_cast<int64_t>(found.size()) > limit) out["more"] = true;
  if (!found.empty()) out["count"] = std::to_string(found.size());
  return Reply{0, {}, out};
}

void SimEtcd::DeleteKey(const std::string& key, EtcdCommit* commit) {
  auto it = kvs_.find(key);
  if (it == kvs_.end()) return;
  if (auto lease = leases_.find(it->second.lease); lease != leases_.end()) lease->second.keys.erase(key);
  kvs_.erase(it);
  commit->changes.push_back(EtcdChange{key, true, {}, 0});
}

SimEtcd::Reply SimEtcd::Put(const nlohmann::json& r, EtcdCommit* commit) {
  const std::string key = Bytes(r, "key");
  const int64_t lease = I64(r, "lease");
  if (key.empty()) return Reply{kInvalidArgument, "etcdserver: key is not provided", {}};
  if (lease != 0 && leases_.count(lease) == 0) return Reply{kNotFound, "etcdserver: requested lease not found", {}};
  nlohmann::json out = nlohmann::json::object();
  auto it = kvs_.find(key);
  if (it != kvs_.end() && Flag(r, "prev_kv")) out["prev_kv"] = KvJson(it->first, it->second);
  const int64_t rev = revision_ + 1;
  Kv& kv = kvs_[key];
  if (kv.create_revision == 0) kv.create_revision = rev;
  if (kv.lease != lease) {
    if (auto old = leases_.find(kv.lease); old != leases_.end()) old->second.keys.erase(key);
    if (lease != 0) leases_[lease].keys.insert(key);
  }
  kv.value = Bytes(r, "value");
  kv.lease = lease;
  kv.mod_revision = rev;
  ++kv.version;
  commit->changes.push_back(EtcdChange{key, false, kv.value, lease});
  return Reply{0, {}, out};
}

SimEtcd::Reply SimEtcd::DeleteRange(const nlohmann::json& r, EtcdCommit* commit) {
  Reply listed = Range(r);
  nlohmann::json out = nlohmann::json::object();
  if (!listed.json.contains("kvs")) return Reply{0, {}, out};
  std::vector<std::string> keys;
  for (const nlohmann::json& kv : listed.json["kvs"]) keys.push_back(Bytes(kv, "key"));
  if (Flag(r, "prev_kv")) out["prev_kvs"] = listed.json["kvs"];
  for (const std::string& k : keys) DeleteKey(k, commit);
  out["deleted"] = std::to_string(keys.size());
  return Reply{0, {}, out};
}

bool SimEtcd::Compare(const nlohmann::json& c) const {
  const std::string target = c.value("target", "VERSION");
  const std::string result = c.value("result", "EQUAL");
  auto it = kvs_.find(Bytes(c, "key"));
  if (target == "VALUE") {
    if (it == kvs_.end()) return false;  // etcd: a value compare on a missing key always fails
    return Holds(result, it->second.value, Bytes(c, "value"));
  }
  const Kv missing;
  const Kv& kv = it == kvs_.end() ? missing : it->second;
  if (target == "CREATE") return Holds(result, kv.create_revision, I64(c, "create_revision"));
  if (target == "MOD") return Holds(result, kv.mod_revision, I64(c, "mod_revision"));
  if (target == "LEASE") return Holds(result, kv.lease, I64(c, "lease"));
  return Holds(result, kv.version, I64(c, "version"));
}

SimEtcd::Reply SimEtcd::Txn(const nlohmann::json& r, EtcdCommit* commit) {
  bool succeeded = true;
  if (r.contains("compare") && r["compare"].is_array()) {
    for (const nlohmann::json& c : r["compare"]) succeeded = succeeded && Compare(c);
  }
  const char* branch = succeeded ? "success" : "failure";
  const nlohmann::json ops = r.contains(branch) && r[branch].is_array() ? r[branch] : nlohmann::json::array();
  // etcd checks a transaction's leases before it applies any of it.
  for (const nlohmann::json& op : ops) {
    if (op.contains("request_put")) {
      const int64_t lease = I64(op["request_put"], "lease");
      if (lease != 0 && leases_.count(lease) == 0) return Reply{kNotFound, "etcdserver: requested lease not found", {}};
    }
  }
  nlohmann::json responses = nlohmann::json::array();
  for (const nlohmann::json& op : ops) {
    if (op.contains("request_range")) {
      responses.push_back({{"response_range", Range(op["request_range"]).json}});
    } else if (op.contains("request_put")) {
      Reply put = Put(op["request_put"], commit);
      if (put.grpc_code != 0) return put;  // an empty key: refused before anything was written
      responses.push_back({{"response_put", put.json}});
    } else if (op.contains("request_delete_range")) {
      responses.push_back({{"response_delete_range", DeleteRange(op["request_delete_range"], commit).json}});
    } else {
      return Reply{kInvalidArgument, "etcdserver: a transaction operation the simulator does not model", {}};
    }
  }
  nlohmann::json out = nlohmann::json::object();
  if (succeeded) out["succeeded"] = true;
  if (!responses.empty()) out["responses"] = responses;
  return Reply{0, {}, out};
}

int64_t SimEtcd::LeaderMonoNs() const {
  return runtime_.clock(host(leader_)).MonoAt(runtime_.true_now()).time_since_epoch().count();
}

void SimEtcd::RefreshLease(int64_t id, Lease& lease) {
  lease.expire_mono_ns = LeaderMonoNs() + lease.ttl_s * kNsPerSecond;
  if (lease_hook_) {
    lease_hook_(id, runtime_.clock(host(leader_))
                        .TrueWhenMonoReaches(MonoTime(Duration(lease.expire_mono_ns)), runtime_.true_now()));
  }
  ArmExpiryCheck(id);
}

void SimEtcd::ArmExpiryCheck(int64_t id) {
  Lease& lease = leases_.at(id);
  if (lease.check_armed || leader_ < 0) return;
  lease.check_armed = true;
  const TrueNs due = runtime_.clock(host(leader_))
                         .TrueWhenMonoReaches(MonoTime(Duration(lease.expire_mono_ns)), runtime_.true_now());
  runtime_.At(due + rng_.UniformInt(0, options_.revoke_delay_max_ns), [this, id] { CheckExpiry(id); });
}

void SimEtcd::CheckExpiry(int64_t id) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return;
  it->second.check_armed = false;
  if (leader_ < 0) return;  // the next leader refreshes it
  if (LeaderMonoNs() < it->second.expire_mono_ns) {
    ArmExpiryCheck(id);  // kept alive meanwhile
    return;
  }
  ++counters_.leases_expired;
  Note(leader_, "etcd-lease-expired", id, static_cast<int64_t>(it->second.keys.size()));
  EtcdCommit commit;
  RevokeLease(id, &commit);
  Commit(&commit);
}

void SimEtcd::RevokeLease(int64_t id, EtcdCommit* commit) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return;
  const std::set<std::string> keys = it->second.keys;
  for (const std::string& key : keys) DeleteKey(key, commit);
  leases_.erase(id);
}

SimEtcd::Reply SimEtcd::LeaseGrant(const nlohmann::json& r) {
  const int64_t ttl = std::max(I64(r, "TTL"), options_.min_ttl_s);
  int64_t id = I64(r, "ID");
  if (id != 0 && leases_.count(id) != 0) return Reply{kFailedPrecondition, "etcdserver: lease already exists", {}};
  if (id == 0) id = next_lease_id_++;
  Lease& lease = leases_[id];
  lease.ttl_s = ttl;
  RefreshLease(id, lease);
  Note(leader_, "etcd-lease-grant", id, ttl);
  return Reply{0, {}, {{"ID", std::to_string(id)}, {"TTL", std::to_string(ttl)}}};
}

SimEtcd::Reply SimEtcd::LeaseRevoke(const nlohmann::json& r, EtcdCommit* commit) {
  const int64_t id = I64(r, "ID");
  if (leases_.count(id) == 0) return Reply{kNotFound, "etcdserver: requested lease not found", {}};
  Note(leader_, "etcd-lease-revoke", id);
  RevokeLease(id, commit);
  return Reply{0, {}, nlohmann::json::object()};
}

SimEtcd::Reply SimEtcd::LeaseKeepAlive(const nlohmann::json& r, EtcdCommit* commit) {
  const int64_t id = I64(r, "ID");
  nlohmann::json out = {{"ID", std::to_string(id)}};
  auto it = leases_.find(id);
  if (it == leases_.end()) return Reply{0, {}, out};  // TTL 0: not found
  if (LeaderMonoNs() >= it->second.expire_mono_ns) {
    // Expired but not yet revoked: etcd revokes it first, then answers "not found".
    ++counters_.leases_expired;
    Note(leader_, "etcd-lease-expired", id, static_cast<int64_t>(it->second.keys.size()));
    RevokeLease(id, commit);
    return Reply{0, {}, out};
  }
  RefreshLease(id, it->second);
  out["TTL"] = std::to_string(it->second.ttl_s);
  return Reply{0, {}, out};
}

SimEtcd::Reply SimEtcd::LeaseTimeToLive(const nlohmann::json& r) const {
  const int64_t id = I64(r, "ID");
  auto it = leases_.find(id);
  if (it == leases_.end()) return Reply{kNotFound, "etcdserver: requested lease not found", {}};
  const int64_t remaining_ns = it->second.expire_mono_ns - LeaderMonoNs();
  const int64_t ttl = remaining_ns > 0 ? remaining_ns / kNsPerSecond : -1;  // whole seconds, as etcd truncates
  return Reply{0, {}, {{"ID", std::to_string(id)}, {"TTL", std::to_string(ttl)}, {"grantedTTL", std::to_string(it->second.ttl_s)}}};
}

}  // namespace kvchaos::sim
