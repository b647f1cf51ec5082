// SentinelResolver: which server is the primary of a Redis master now, as its Sentinels say.
// CoordinationRedisBackend in redis+sentinel:// mode asks it before it connects and again after a
// connection failed, timed out or answered READONLY (a failover may have moved the primary). It
// asks each sentinel in turn `SENTINEL get-master-addr-by-name MASTER` and takes the first
// address named, starting with the sentinel that answered last (Redis's Sentinel client
// guidelines). Sentinels are asked without AUTH; one connection per question, since questions
// come only at start and after failures.
#pragma once

#include <string>
#include <vector>

#include "core/common/runtime.h"
#include "core/common/status.h"
#include "core/election/coordination_uri.h"
#include "core/election/redis_replies.h"

namespace kvchaos::election {

class SentinelResolver {
 public:
  // `timeout_ms`: how long one sentinel may take to connect and answer.
  SentinelResolver(Runtime& runtime, std::vector<SentinelAddress> sentinels, std::string master_name,
                   int64_t timeout_ms);

  // The primary the first answering sentinel names. Each sentinel waits at most min(timeout_ms,
  // time to `deadline`). Unavailable, with every sentinel's answer, when none names one; Timeout
  // when the deadline passed first.
  Result<redis_replies::PrimaryAddress> Resolve(MonoTime deadline);

  const std::string& master_name() const { return master_name_; }
  // "127.0.0.1:26379,127.0.0.1:26380/M", as in the URI.
  std::string Describe() const;

 private:
  // One sentinel's answer.
  Result<redis_replies::PrimaryAddress> Ask(const SentinelAddress& sentinel, Duration timeout);

  Runtime& runtime_;
  const std::vector<SentinelAddress> sentinels_;
  const std::string master_name_;
  const int64_t timeout_ms_;
  Mutex mu_;
  size_t first_ GUARDED_BY(mu_) = 0;  // the sentinel that answered last is asked first
};

}  // namespace kvchaos::election
