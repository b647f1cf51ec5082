// Asks Redis Sentinels for the primary (see the header).
#include "core/election/sentinel_resolver.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <memory>

#include "core/common/redis_reply_bound.h"

namespace kvchaos::election {

namespace {

// At least 1 us: a zero timeval would mean "no timeout" to hiredis.
timeval ToTimeval(Duration d) {
  const int64_t us = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

std::string Name(const SentinelAddress& s) {
  return (s.host.find(':') != std::string::npos ? "[" + s.host + "]" : s.host) + ":" + std::to_string(s.port);
}

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};

}  // namespace

SentinelResolver::SentinelResolver(Runtime& runtime, std::vector<SentinelAddress> sentinels, std::string master_name,
                                   int64_t timeout_ms)
    : runtime_(runtime),
      sentinels_(std::move(sentinels)),
      master_name_(std::move(master_name)),
      timeout_ms_(timeout_ms),
      mu_(runtime) {}

std::string SentinelResolver::Describe() const {
  std::string s;
  for (const SentinelAddress& sentinel : sentinels_) s += (s.empty() ? "" : ",") + Name(sentinel);
  return s + "/" + master_name_;
}

Result<redis_replies::PrimaryAddress> SentinelResolver::Ask(const SentinelAddress& sentinel, Duration timeout) {
  const std::string where = "sentinel " + Name(sentinel);
  std::unique_ptr<redisContext, ContextFree> c(
      redisConnectWithTimeout(sentinel.host.c_str(), sentinel.port, ToTimeval(timeout)));
  if (c == nullptr) return Status::Unavailable(where + ": cannot allocate a connection");
  if (c->err != 0) return Status::Unavailable(where + ": connect failed: " + c->errstr);
  BoundRedisReplies(c->reader);
  if (redisSetTimeout(c.get(), ToTimeval(timeout)) != REDIS_OK) {
    return Status::Unavailable(where + ": cannot set the command timeout");
  }
  const char* argv[] = {"SENTINEL", "get-master-addr-by-name", master_name_.c_str()};
  const size_t lens[] = {8, 23, master_name_.size()};
  std::unique_ptr<redisReply, ReplyFree> reply(static_cast<redisReply*>(redisCommandArgv(c.get(), 3, argv, lens)));
  if (reply == nullptr) {
    const std::string err = c->errstr;
    const bool timed_out = err.find("temporarily unavailable") != std::string::npos ||
                           err.find("timed out") != std::string::npos;
    return timed_out ? Status::Timeout(where + ": no answer within " + std::to_string(ToMillis(timeout)) + " ms")
                     : Status::Unavailable(where + ": " + err);
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return Status::Unavailable(where + ": " + redis_replies::Text(reply.get()) + " (is it a sentinel?)");
  }
  auto address = redis_replies::MasterAddress(reply.get(), master_name_);
  if (!address.ok()) return address.status().WithContext(where);
  return address;
}

Result<redis_replies::PrimaryAddress> SentinelResolver::Resolve(MonoTime deadline) {
  size_t first = 0;
  {
    MutexLock lock(mu_);
    first = first_;
  }
  std::string answers;
  for (size_t i = 0; i < sentinels_.size(); ++i) {
    const size_t index = (first + i) % sentinels_.size();
    const Duration timeout = std::min<Duration>(Millis(timeout_ms_), deadline - runtime_.Now());
    if (timeout <= Duration::zero()) {
      return Status::Timeout("sentinels " + Describe() + ": the deadline passed before one named the primary" +
                             (answers.empty() ? "" : " (" + answers + ")"));
    }
    auto address = Ask(sentinels_[index], timeout);
    if (address.ok()) {
      MutexLock lock(mu_);
      first_ = index;
      return address;
    }
    answers += (answers.empty() ? "" : "; ") + address.status().message();
  }
  return Status::Unavailable("no sentinel of " + Describe() + " named the primary: " + answers);
}

}  // namespace kvchaos::election
