// ForwardingAioOps: the real libaio for every call; test doubles derive from it and override only
// the calls they change (fail a submit, hold a completion, count what the kernel holds, tell a
// crash model of a sync), so none of them repeats the forwarding of the rest.
#pragma once

#include <unistd.h>

#include <string>

#include "core/store/aio_engine.h"

namespace kvchaos::store::testing {

class ForwardingAioOps : public AioOps {
 public:
  int Setup(int max_events, io_context_t* ctx) override { return AioOps::Real().Setup(max_events, ctx); }
  int Submit(io_context_t ctx, long count, struct iocb** iocbs) override {
    return AioOps::Real().Submit(ctx, count, iocbs);
  }
  int GetEvents(io_context_t ctx, long min_nr, long max_nr, struct io_event* events, struct timespec* timeout) override {
    return AioOps::Real().GetEvents(ctx, min_nr, max_nr, events, timeout);
  }
  int Destroy(io_context_t ctx) override { return AioOps::Real().Destroy(ctx); }

 protected:
  // The file behind an iocb's fd, from /proc/self/fd (symlinks resolved); empty when unknown.
  static std::string PathOf(int fd) {
    char buf[4096];
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }
};

}  // namespace kvchaos::store::testing
