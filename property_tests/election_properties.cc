// Properties of the coordination backends and URIs: random operation sequences on the memory and
// file backends agree with a small reference model of a leased lock (one holder at a time,
// expiry at the lease, holder-only renew/unlock/RaiseTokenFloor) and fencing tokens strictly increase
// over grants and raises (a raise gives max(counter, floor) + 1);
// the URI parser never crashes and only ever fails with InvalidConfig.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "core/election/coordination_file_backend.h"
#include "core/election/coordination_memory_backend.h"
#include "core/election/coordination_uri.h"
#include "core/election/tests/manual_runtime.h"
#include <cstdlib>
#include <filesystem>

namespace kvchaos::election {
namespace {

using namespace std::chrono_literals;

// A scratch directory removed afterwards (property_tests does not link the testing library).
struct ScratchDir {
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kvchaos-prop-file-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path path;
};

// The reference: who holds the lock until when (model time in ms), and the last token.
struct LockModel {
  std::string holder;
  int64_t expires_ms = 0;
  uint64_t token = 0;
  std::string Live(int64_t now_ms) const { return now_ms < expires_ms ? holder : ""; }
};

void CheckAgainstModel(CoordinationBackend& b, testing::ManualRuntime& rt, int max_steps) {
  LockModel m;
  int64_t now_ms = 0;
  const std::vector<std::string> holders = {"a", "b", "c"};
  const int steps = *rc::gen::inRange(1, max_steps);
  for (int i = 0; i < steps; ++i) {
    const int op = *rc::gen::inRange(0, 6);
    const std::string who = *rc::gen::elementOf(holders);
    const int64_t lease_ms = *rc::gen::inRange<int64_t>(1, 300);
    const std::string live = m.Live(now_ms);
    switch (op) {
      case 0: {
        auto g = b.TryLock("L", who, Millis(lease_ms), kNoDeadline);
        const bool expect_ok = live.empty() || live == who;
        RC_ASSERT(g.ok() == expect_ok);
        if (g.ok()) {
          RC_ASSERT(g->token == m.token + 1);  // strictly increasing, one per grant
          m = {who, now_ms + lease_ms, g->token};
        } else {
          RC_ASSERT(g.status().code() == StatusCode::kAlreadyExists);
        }
        break;
      }
      case 1: {
        Status s = b.RenewLock("L", who, Millis(lease_ms), kNoDeadline);
        RC_ASSERT(s.ok() == (live == who));
        if (s.ok()) m.expires_ms = now_ms + lease_ms;
        break;
      }
      case 2: {
        Status s = b.Unlock("L", who, kNoDeadline);
        RC_ASSERT(s.ok() == (live == who));
        if (s.ok()) m.expires_ms = now_ms;
        break;
      }
      case 3: {
        auto h = b.GetLockHolder("L", kNoDeadline);
        RC_ASSERT(h.ok());
        RC_ASSERT(h->holder == live);
        RC_ASSERT(h->token == m.token);
        if (!live.empty()) RC_ASSERT(h->remaining_ttl == Millis(m.expires_ms - now_ms));
        break;
      }
      case 4: {
        // The fencing floor: only the live holder raises; the counter becomes max(counter, floor) + 1.
        const uint64_t floor = *rc::gen::inRange<uint64_t>(0, m.token + 20);
        auto r = b.RaiseTokenFloor("L", who, floor, kNoDeadline);
        RC_ASSERT(r.ok() == (live == who));
        if (r.ok()) {
          RC_ASSERT(*r == std::max(m.token, floor) + 1);
          RC_ASSERT(*r > floor);
          m.token = *r;
        } else {
          RC_ASSERT(r.status().code() == StatusCode::kLockLost);
        }
        break;
      }
      default: {
        const int64_t step = *rc::gen::inRange<int64_t>(0, 200);
        rt.Advance(Millis(step));
        now_ms += step;
        break;
      }
    }
  }
}

RC_GTEST_PROP(ElectionBackendProperties, MemoryBackendMatchesTheLockModel, ()) {
  testing::ManualRuntime rt;
  CoordinationMemoryBackend b(rt);
  CheckAgainstModel(b, rt, 60);
}

RC_GTEST_PROP(ElectionBackendProperties, FileBackendMatchesTheLockModel, ()) {
  ScratchDir dir;
  RC_ASSERT(!dir.path.empty());
  testing::ManualRuntime rt;
  CoordinationFileBackend b(rt, dir.path);
  RC_ASSERT(b.Init().ok());
  CheckAgainstModel(b, rt, 25);  // every grant is fsynced: keep it short
}

RC_GTEST_PROP(ElectionUriProperties, ParserNeverCrashesAndOnlyRejectsWithInvalidConfig, ()) {
  const std::string alphabet = "redis:/file@memory?&=db_timeout_msretry_countcluster_name0123456789[]:.%x";
  const std::string tail = *rc::gen::container<std::string>(rc::gen::elementOf(alphabet));
  const std::string prefix = *rc::gen::elementOf(std::vector<std::string>{"redis://", "file://", "memory://", ""});
  auto u = ParseCoordinationUri(prefix + tail);
  if (!u.ok()) RC_ASSERT(u.status().code() == StatusCode::kInvalidConfig);
}

RC_GTEST_PROP(ElectionUriProperties, RedisFieldsRoundTrip, ()) {
  const int port = *rc::gen::inRange(1, 65536);
  const int db = *rc::gen::inRange(0, 64);
  const int64_t timeout_ms = *rc::gen::inRange<int64_t>(1, 100000);
  const int retry = *rc::gen::inRange(0, 101);
  const std::string cluster =
      *rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::elementOf(std::string("abcXYZ019_-."))));
  const std::string uri = "redis://pw@host-1:" + std::to_string(port) + "/?db=" + std::to_string(db) +
                          "&timeout_ms=" + std::to_string(timeout_ms) + "&retry_count=" + std::to_string(retry) +
                          "&cluster_name=" + cluster;
  auto u = ParseCoordinationUri(uri);
  RC_ASSERT(u.ok());
  RC_ASSERT(u->redis.host == "host-1");
  RC_ASSERT(u->redis.port == port);
  RC_ASSERT(u->redis.db == db);
  RC_ASSERT(u->redis.timeout_ms == timeout_ms);
  RC_ASSERT(u->redis.retry_count == retry);
  RC_ASSERT(u->redis.cluster_name == cluster);
  RC_ASSERT(u->redis.password == "pw");
}

}  // namespace
}  // namespace kvchaos::election
