// clock_probe: prints "<steady_clock ns> <system_clock ns>" every 10 ms, one line each, flushed,
// for as long as it runs. The fake-clock test reads it to see what a process under libfaketime
// sees of its two clocks.
#include <chrono>
#include <cstdio>
#include <thread>

int main() {
  for (;;) {
    const auto steady = std::chrono::steady_clock::now().time_since_epoch();
    const auto wall = std::chrono::system_clock::now().time_since_epoch();
    std::printf("%lld %lld\n", static_cast<long long>(std::chrono::nanoseconds(steady).count()),
                static_cast<long long>(std::chrono::nanoseconds(wall).count()));
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}
