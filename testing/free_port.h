// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
// Servers started on it may still lose a race with another process: callers retry on bind errors.
#pragma once

namespace kvchaos::testing {

int PickFreeLoopbackPort();

}  // namespace kvchaos::testing
