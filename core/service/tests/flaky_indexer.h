// FlakyIndexer: a real in-memory MetaIndexer whose reads can be made to fail, for tests of the
// node's recovery retries (ListKeys fails the next N calls) and of CheckHealth's indexer ping
// (NewestFencingToken fails while `ping_fails` is set), and RaiseFence (fails the next N calls,
// for the promotion's fence step). Writes always go through. `inner()` reaches the real index.
#pragma once

#include <atomic>
#include <memory>

#include "core/meta/meta_indexer.h"

namespace kvchaos::service::testing {

class FlakyIndexer final : public meta::MetaIndexer {
 public:
  FlakyIndexer() : inner_(std::move(*meta::OpenMetaIndexer("memory://"))) {}

  // The next `n` ListKeys calls fail with Unavailable (< 0: all of them, until set again).
  void FailListKeys(int n) { list_failures_ = n; }
  void FailPing(bool on) { ping_fails_ = on; }
  // The next `n` RaiseFence calls fail with Unavailable.
  void FailRaiseFence(int n) { fence_failures_ = n; }
  int failed_list_calls() const { return failed_list_calls_; }
  int raise_fence_calls() const { return raise_fence_calls_; }
  meta::MetaIndexer& inner() { return *inner_; }

  std::string Describe() const override { return "flaky(memory://)"; }
  Status Put(uint64_t token, std::span<const meta::MetaWrite> writes) override { return inner_->Put(token, writes); }
  Status Delete(uint64_t token, std::span<const std::string> keys,
                std::span<const std::string> expected_write_ids = {}, std::string_view delete_id = {}) override {
    return inner_->Delete(token, keys, expected_write_ids, delete_id);
  }
  Result<std::vector<std::optional<meta::MetaRecord>>> Get(std::span<const std::string> keys) override {
    return inner_->Get(keys);
  }
  Result<std::vector<std::string>> ListKeys(std::string_view prefix) override {
    int left = list_failures_.load();
    while (left != 0) {
      if (left < 0 || list_failures_.compare_exchange_weak(left, left - 1)) {
        ++failed_list_calls_;
        return Status::Unavailable("flaky indexer: ListKeys failed on purpose");
      }
    }
    return inner_->ListKeys(prefix);
  }
  Result<uint64_t> NewestFencingToken() override {
    if (ping_fails_) return Status::Unavailable("flaky indexer: ping failed on purpose");
    return inner_->NewestFencingToken();
  }
  Status RaiseFence(uint64_t token) override {
    ++raise_fence_calls_;
    int left = fence_failures_.load();
    while (left > 0) {
      if (fence_failures_.compare_exchange_weak(left, left - 1)) {
        return Status::Unavailable("flaky indexer: RaiseFence failed on purpose");
      }
    }
    return inner_->RaiseFence(token);
  }

 private:
  std::unique_ptr<meta::MetaIndexer> inner_;
  std::atomic<int> list_failures_{0};
  std::atomic<int> failed_list_calls_{0};
  std::atomic<bool> ping_fails_{false};
  std::atomic<int> fence_failures_{0};
  std::atomic<int> raise_fence_calls_{0};
};

}  // namespace kvchaos::service::testing
