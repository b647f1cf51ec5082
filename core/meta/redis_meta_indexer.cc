// RedisMetaIndexer on hiredis (see the header for the key layout and the fencing script).
#include "core/meta/redis_meta_indexer.h"

#include "core/common/redis_reply_bound.h"
#include "core/meta/redis_meta_replies.h"

#include "core/meta/fence.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace kvchaos::meta {
namespace {

// The fence rule of core/meta/fence.h (CheckFence), shared by every script: refuse a token older
// than the newest; raise() makes it the newest, called by each script once its own checks passed
// (a refused write leaves the fence as it was). Tokens are compared as decimal strings (no leading
// zeros), since Lua numbers are doubles and tokens may pass 2^53.
constexpr const char* kOlder = R"lua(
local function older(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local tok = ARGV[1]
local cur = redis.call('GET', KEYS[1]) or '0'
if older(tok, cur) then
  return redis.error_reply('STALE_FENCING_TOKEN ' .. cur)
end
local function raise()
  if older(cur, tok) then redis.call('SET', KEYS[1], tok) end
end
local function conflict(key, current, expected)
  local function show(id) if id == '' then return 'none' end return "'" .. id .. "'" end
  return redis.error_reply('CONFLICT ' .. key .. ' has write id ' .. show(current) .. ', expected ' .. show(expected))
end
)lua";

// KEYS = fence, k1..kn; ARGV = token, then per key: expected write id, write id, field count,
// field, value, ... (the write id among the fields when there is one). CheckWriteId of
// core/meta/fence.h for every key first, so a conflict on one changes none.
constexpr const char* kPutBody = R"lua(
local apply, first, count = {}, {}, {}
local a = 2
for i = 2, #KEYS do
  local expected, id, n = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  apply[i], first[i], count[i] = true, a + 3, n
  a = a + 3 + 2 * n
  if id ~= '' then
    local current = redis.call('HGET', KEYS[i], 'write_id') or ''
    if current == id then
      apply[i] = false
    elseif current ~= expected then
      return conflict(KEYS[i], current, expected)
    end
  end
end
raise()
for i = 2, #KEYS do
  if apply[i] then
    redis.call('DEL', KEYS[i])
    redis.call('HSET', KEYS[i], unpack(ARGV, first[i], first[i] + 2 * count[i] - 1))
  end
end
return #KEYS - 1
)lua";

// KEYS = fence, k1..kn; ARGV = token, mode, then: mode 'all' nothing (unconditional); 'expected'
// one expected write id per key (CheckDeleteWriteId: an absent record is deleted already);
// 'ordered' the delete's own write id (WrittenAfter: records written after it are kept).
constexpr const char* kDeleteBody = R"lua(
local mode = ARGV[2]
if mode == 'expected' then
  for i = 2, #KEYS do
    if redis.call('EXISTS', KEYS[i]) == 1 then
      local current = redis.call('HGET', KEYS[i], 'write_id') or ''
      if current ~= ARGV[i + 1] then return conflict(KEYS[i], current, ARGV[i + 1]) end
    end
  end
end
local function written_after(record_id, delete_id)
  local rt, rn = string.match(record_id, '^w%-(%d+)%-(%d+)$')
  local dt, dn = string.match(delete_id, '^w%-(%d+)%-(%d+)$')
  if not rt or not dt then return false end
  if rt ~= dt then return older(dt, rt) end
  return older(dn, rn)
end
raise()
for i = 2, #KEYS do
  if mode ~= 'ordered' or not written_after(redis.call('HGET', KEYS[i], 'write_id') or '', ARGV[3]) then
    redis.call('DEL', KEYS[i])
  end
end
return #KEYS - 1
)lua";

// KEYS = fence; ARGV = token. Only the shared check-and-set of kOlder.
constexpr const char* kFenceBody = R"lua(
raise()
return 0
)lua";

// KEYS = fence; ARGV = token. The check of kOlder, then SET even when the fence is there already:
// a write, so the WAIT after it on this connection waits for the fence to reach the replicas (WAIT
// covers only what this connection wrote, and an earlier attempt may have been on another one).
constexpr const char* kFenceSetBody = R"lua(
redis.call('SET', KEYS[1], tok)
return 0
)lua";

bool ParseInt(std::string_view text, int* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// Escapes glob characters for SCAN MATCH.
std::string GlobEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

Result<RedisIndexerOptions> RedisIndexerOptions::FromUri(std::string_view uri) {
  RedisIndexerOptions o;
  auto bad = [&](const std::string& part, const std::string& why) {
    return Status::InvalidConfig("meta indexer URI '" + std::string(uri) + "': " + part + ": " + why);
  };
  constexpr std::string_view kScheme = "redis://";
  if (!uri.starts_with(kScheme)) return bad("scheme", "expected redis://");
  std::string_view rest = uri.substr(kScheme.size());
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (auto slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);  // path ignored
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    o.password = std::string(rest.substr(0, at));
    rest = rest.substr(at + 1);
  }
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos) return bad("host:port", "missing ':port'");
  o.host = std::string(rest.substr(0, colon));
  if (o.host.empty()) return bad("host", "empty");
  if (!ParseInt(rest.substr(colon + 1), &o.port) || o.port <= 0 || o.port > 65535) {
    return bad("port", "'" + std::string(rest.substr(colon + 1)) + "' is not a port number");
  }
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) return bad("query '" + std::string(item) + "'", "expected key=value");
    const std::string key(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    int* target = key == "db"               ? &o.db
                  : key == "timeout_ms"     ? &o.timeout_ms
                  : key == "retry_count"    ? &o.retry_count
                  : key == "fence_replicas" ? &o.fence_replicas
                  : key == "fence_wait_ms"  ? &o.fence_wait_ms
                                            : nullptr;
    if (target != nullptr) {
      if (!ParseInt(value, target) || *target < 0) return bad(key, "'" + std::string(value) + "' is not a non-negative integer");
    } else if (key == "prefix") {
      o.prefix = std::string(value);
    } else {
      return bad(key, "unknown parameter (known: db, timeout_ms, retry_count, prefix, fence_replicas, fence_wait_ms)");
    }
  }
  if (o.timeout_ms == 0) return bad("timeout_ms", "must be > 0");
  if (o.fence_wait_ms == 0) o.fence_wait_ms = std::max(1, o.timeout_ms / 2);
  // WAIT answers only after its timeout: past the client's read timeout the answer is never read.
  if (o.fence_replicas > 0 && o.fence_wait_ms >= o.timeout_ms) {
    return bad("fence_wait_ms", std::to_string(o.fence_wait_ms) + " must be below timeout_ms (" +
                                    std::to_string(o.timeout_ms) + "), or WAIT's answer comes after the client gave up");
  }
  return o;
}

Result<std::unique_ptr<RedisMetaIndexer>> RedisMetaIndexer::Open(const RedisIndexerOptions& options) {
  std::unique_ptr<RedisMetaIndexer> indexer(new RedisMetaIndexer(options));
  std::lock_guard<std::mutex> lock(indexer->mu_);
  KVCHAOS_RETURN_IF_ERROR(indexer->ConnectLocked());
  return indexer;
}

RedisMetaIndexer::~RedisMetaIndexer() {
  if (ctx_ != nullptr) redisFree(ctx_);
}

std::string RedisMetaIndexer::Describe() const {
  return "redis://" + options_.host + ":" + std::to_string(options_.port) + "/?db=" + std::to_string(options_.db);
}

Status RedisMetaIndexer::ConnectLocked() {
  if (ctx_ != nullptr) {
    redisFree(ctx_);
    ctx_ = nullptr;
  }
  timeval tv{options_.timeout_ms / 1000, (options_.timeout_ms % 1000) * 1000};
  ctx_ = redisConnectWithTimeout(options_.host.c_str(), options_.port, tv);
  if (ctx_ == nullptr || ctx_->err != 0) {
    const std::string why = ctx_ != nullptr ? ctx_->errstr : "out of memory";
    if (ctx_ != nullptr) redisFree(ctx_);
    ctx_ = nullptr;
    return Status::Unavailable("meta index " + Describe() + ": connect failed: " + why);
  }
  redisSetTimeout(ctx_, tv);
  BoundRedisReplies(ctx_->reader);
  std::vector<Command> setup;
  if (!options_.password.empty()) setup.push_back({"AUTH", options_.password});
  if (options_.db > 0) setup.push_back({"SELECT", std::to_string(options_.db)});
  setup.push_back({"SCRIPT", "LOAD", std::string(kOlder) + kPutBody});
  setup.push_back({"SCRIPT", "LOAD", std::string(kOlder) + kDeleteBody});
  setup.push_back({"SCRIPT", "LOAD", std::string(kOlder) + kFenceBody});
  setup.push_back({"SCRIPT", "LOAD", std::string(kOlder) + kFenceSetBody});
  Result<std::vector<Reply>> replies = PipelineLocked(setup);
  if (!replies.ok()) return replies.status();
  const size_t first_script = replies->size() - 4;  // AUTH and SELECT come before the four loads
  for (size_t i = 0; i < first_script; ++i) {
    const redisReply* r = (*replies)[i].get();
    if (r->type == REDIS_REPLY_ERROR) {
      return Status::Unavailable("meta index " + Describe() + ": " + setup[i][0] + " failed: " +
                                 std::string(r->str != nullptr ? r->str : ""));
    }
  }
  std::string* shas[] = {&put_sha_, &delete_sha_, &fence_sha_, &fence_set_sha_};
  for (size_t i = 0; i < 4; ++i) {
    Result<std::string> sha = redis_meta_replies::ScriptSha((*replies)[first_script + i].get(),
                                                            "meta index " + Describe() + ": SCRIPT LOAD");
    if (!sha.ok()) return sha.status();
    *shas[i] = std::move(*sha);
  }
  return Status::Ok();
}

Result<std::vector<RedisMetaIndexer::Reply>> RedisMetaIndexer::PipelineLocked(const std::vector<Command>& commands) {
  if (ctx_ == nullptr) return Status::Unavailable("meta index " + Describe() + ": not connected");
  for (const Command& cmd : commands) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& arg : cmd) {
      argv.push_back(arg.data());
      lens.push_back(arg.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()) != REDIS_OK) {
      return Status::Unavailable("meta index " + Describe() + ": " + ctx_->errstr);
    }
  }
  std::vector<Reply> replies;
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) {
      const std::string why = ctx_->errstr;
      redisFree(ctx_);  // the stream is out of step now: drop the connection
      ctx_ = nullptr;
      return Status::Unavailable("meta index " + Describe() + ": " + why);
    }
    replies.emplace_back(static_cast<redisReply*>(raw));
  }
  return replies;
}

Result<std::vector<RedisMetaIndexer::Reply>> RedisMetaIndexer::Run(const std::vector<Command>& commands) {
  std::lock_guard<std::mutex> lock(mu_);
  Status last;
  for (int attempt = 0; attempt <= options_.retry_count; ++attempt) {
    if (ctx_ == nullptr) {
      last = ConnectLocked();
      if (!last.ok()) continue;
    }
    Result<std::vector<Reply>> r = PipelineLocked(commands);
    if (r.ok()) return r;
    last = r.status();
  }
  return last;
}

Status RedisMetaIndexer::RunScripts(uint64_t fencing_token, const std::vector<Command>& commands) {
  std::vector<Command> pending = commands;
  for (int round = 0; round < 2 && !pending.empty(); ++round) {
    Result<std::vector<Reply>> replies = Run(pending);
    if (!replies.ok()) return replies.status();
    std::vector<Command> retry;
    for (size_t i = 0; i < replies->size(); ++i) {
      Status error;
      switch (redis_meta_replies::ScriptResult((*replies)[i].get(), "meta index " + Describe(), fencing_token, &error)) {
        case redis_meta_replies::ScriptOutcome::kDone: break;
        case redis_meta_replies::ScriptOutcome::kRetry: retry.push_back(pending[i]); break;
        case redis_meta_replies::ScriptOutcome::kFailed: return error;
      }
    }
    if (!retry.empty()) {
      // Redis lost its script cache (restart): load again, then rerun the scripts that missed.
      // The SHAs stay the same (they hash the script text), so the commands can be resent as they are.
      std::lock_guard<std::mutex> lock(mu_);
      KVCHAOS_RETURN_IF_ERROR(ConnectLocked());
    }
    pending = std::move(retry);
  }
  if (!pending.empty()) return Status::Unavailable("meta index " + Describe() + ": scripts missing after reload");
  return Status::Ok();
}

Status RedisMetaIndexer::Put(uint64_t fencing_token, std::span<const MetaWrite> writes) {
  for (const MetaWrite& w : writes) {
    if (w.record.empty()) return Status::InvalidArgument("meta index: empty record for key '" + w.key + "'");
  }
  // One script for the whole call, so its checks cover every key before any is written.
  Command cmd{"EVALSHA", put_sha_, std::to_string(writes.size() + 1), FenceKey()};
  for (const MetaWrite& w : writes) cmd.push_back(MetaKey(w.key));
  cmd.push_back(std::to_string(fencing_token));
  for (const MetaWrite& w : writes) {
    cmd.push_back(w.expected_write_id);
    cmd.push_back(w.write_id);
    const bool stores_id = !w.write_id.empty() && !w.record.contains(std::string(kWriteIdField));
    cmd.push_back(std::to_string(w.record.size() + (stores_id ? 1 : 0)));
    for (const auto& [field, value] : w.record) {
      cmd.push_back(field);
      cmd.push_back(field == kWriteIdField && !w.write_id.empty() ? w.write_id : value);
    }
    if (stores_id) {
      cmd.push_back(std::string(kWriteIdField));
      cmd.push_back(w.write_id);
    }
  }
  return RunScripts(fencing_token, {std::move(cmd)});
}

Status RedisMetaIndexer::Delete(uint64_t fencing_token, std::span<const std::string> keys,
                                std::span<const std::string> expected_write_ids, std::string_view delete_id) {
  KVCHAOS_RETURN_IF_ERROR(CheckDeleteArguments(keys.size(), expected_write_ids.size(), delete_id));
  const char* mode = !expected_write_ids.empty() ? "expected" : !delete_id.empty() ? "ordered" : "all";
  Command cmd{"EVALSHA", delete_sha_, std::to_string(keys.size() + 1), FenceKey()};
  for (const std::string& key : keys) cmd.push_back(MetaKey(key));
  cmd.push_back(std::to_string(fencing_token));
  cmd.push_back(mode);
  cmd.insert(cmd.end(), expected_write_ids.begin(), expected_write_ids.end());
  if (!delete_id.empty()) cmd.emplace_back(delete_id);
  return RunScripts(fencing_token, {std::move(cmd)});
}

Status RedisMetaIndexer::RaiseFence(uint64_t fencing_token) {
  if (options_.fence_replicas > 0) return RaiseReplicatedFence(fencing_token);
  return RunScripts(fencing_token, {{"EVALSHA", fence_sha_, "1", FenceKey(), std::to_string(fencing_token)}});
}

Status RedisMetaIndexer::RaiseReplicatedFence(uint64_t fencing_token) {
  const std::string where = "meta index " + Describe();
  // Never WAIT 0 (forever): options built without FromUri may leave the wait unset.
  const int wait_ms = options_.fence_wait_ms > 0 ? options_.fence_wait_ms : std::max(1, options_.timeout_ms / 2);
  // Two rounds: the second after reloading the scripts (NOSCRIPT after a Redis restart).
  for (int round = 0; round < 2; ++round) {
    Result<std::vector<Reply>> replies =
        Run({{"EVALSHA", fence_set_sha_, "1", FenceKey(), std::to_string(fencing_token)},
             {"WAIT", std::to_string(options_.fence_replicas), std::to_string(wait_ms)}});
    if (!replies.ok()) return replies.status();
    Status error;
    switch (redis_meta_replies::ScriptResult((*replies)[0].get(), where, fencing_token, &error)) {
      case redis_meta_replies::ScriptOutcome::kFailed: return error;
      case redis_meta_replies::ScriptOutcome::kRetry: {
        std::lock_guard<std::mutex> lock(mu_);
        KVCHAOS_RETURN_IF_ERROR(ConnectLocked());
        continue;
      }
      case redis_meta_replies::ScriptOutcome::kDone: break;
    }
    const redisReply* waited = (*replies)[1].get();
    if (waited->type != REDIS_REPLY_INTEGER) {
      return Status::Unavailable(where + ": WAIT answered " +
                                 (waited->type == REDIS_REPLY_ERROR && waited->str != nullptr ? std::string(waited->str)
                                                                                               : "no count of replicas"));
    }
    if (waited->integer < options_.fence_replicas) {
      return Status::Unavailable(where + ": the fence at token " + std::to_string(fencing_token) + " reached " +
                                 std::to_string(waited->integer) + " of " + std::to_string(options_.fence_replicas) +
                                 " replica(s) within " + std::to_string(wait_ms) +
                                 " ms (fence_replicas): a failover could take it back");
    }
    return Status::Ok();
  }
  return Status::Unavailable(where + ": scripts missing after reload");
}

Result<std::vector<std::optional<MetaRecord>>> RedisMetaIndexer::Get(std::span<const std::string> keys) {
  std::vector<Command> commands;
  for (const std::string& key : keys) commands.push_back({"HGETALL", MetaKey(key)});
  Result<std::vector<Reply>> replies = Run(commands);
  if (!replies.ok()) return replies.status();
  std::vector<std::optional<MetaRecord>> out;
  for (size_t i = 0; i < replies->size(); ++i) {
    Result<std::optional<MetaRecord>> record =
        redis_meta_replies::Record((*replies)[i].get(), "meta index " + Describe(), keys[i]);
    if (!record.ok()) return record.status();
    out.push_back(std::move(*record));
  }
  return out;
}

Result<std::vector<std::string>> RedisMetaIndexer::ListKeys(std::string_view prefix) {
  const std::string match = GlobEscape(MetaKey(prefix)) + "*";
  const std::string ours = MetaKey("");
  std::vector<std::string> out;
  std::string cursor = "0";
  // Bounded: SCAN returns to cursor 0 after a full pass; the bound only guards a broken server.
  for (int rounds = 0; rounds < 1000000; ++rounds) {
    Result<std::vector<Reply>> replies = Run({{"SCAN", cursor, "MATCH", match, "COUNT", "1000"}});
    if (!replies.ok()) return replies.status();
    Result<std::string> next = redis_meta_replies::ScanPage((*replies)[0].get(), "meta index " + Describe(), ours, &out);
    if (!next.ok()) return next.status();
    cursor = std::move(*next);
    if (cursor == "0") break;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());  // SCAN may repeat keys
  return out;
}

Result<uint64_t> RedisMetaIndexer::NewestFencingToken() {
  Result<std::vector<Reply>> replies = Run({{"GET", FenceKey()}});
  if (!replies.ok()) return replies.status();
  return redis_meta_replies::FenceToken((*replies)[0].get(), "meta index " + Describe());
}

}  // namespace kvchaos::meta
