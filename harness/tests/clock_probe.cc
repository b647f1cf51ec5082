// clock_probe: a child for the clock-fault tests (fake_clock_test.cc), run under the clock preload.
//   clock_probe          prints "<steady_clock ns> <system_clock ns> <true monotonic ns>" every
//                        10 ms, one line each, flushed, for as long as it runs;
//   clock_probe waits MS prints, for each kind of wait in turn (forever), "<kind> <fake ns waited>
//                        <true ns waited>" after waiting MS ms of its own clock that way;
//   clock_probe chain    makes one call of each function clock_chain_interposer.c counts (which
//                        the preload replaces), then prints "chain <function> <calls that reached
//                        the interposer>" for each.
// The true monotonic reading comes from the clock_gettime system call itself, which the preload
// does not see, so the test can compare the child's clocks with the machine's.
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

extern "C" long kvchaos_interposer_calls(const char* name);  // clock_chain_interposer.c

namespace {

long long TrueMonoNs() {
  timespec ts{};
  ::syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

template <typename Clock>
long long Ns(typename Clock::time_point t) {
  return static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

void Print() {
  for (;;) {
    std::printf("%lld %lld %lld\n", Ns<std::chrono::steady_clock>(std::chrono::steady_clock::now()),
                Ns<std::chrono::system_clock>(std::chrono::system_clock::now()), TrueMonoNs());
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// A pthread condition variable on `clock` (its attribute), waited with pthread_cond_timedwait.
void TimedWait(clockid_t clock, std::chrono::milliseconds ms) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, clock);
  pthread_cond_t cond;
  pthread_cond_init(&cond, &attr);
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  timespec deadline{};
  clock_gettime(clock, &deadline);
  const long long ns = static_cast<long long>(deadline.tv_nsec) + ms.count() * 1'000'000LL;
  deadline.tv_sec += static_cast<time_t>(ns / 1'000'000'000);
  deadline.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  pthread_mutex_lock(&mutex);
  while (pthread_cond_timedwait(&cond, &mutex, &deadline) == 0) {
  }
  pthread_mutex_unlock(&mutex);
  pthread_cond_destroy(&cond);
}

void Waits(std::chrono::milliseconds ms) {
  std::mutex m;
  std::condition_variable cv;
  const char* kinds[] = {"cv_steady", "sleep_until", "cv_system", "timedwait_mono", "timedwait_real", "sleep_for"};
  for (;;) {
    for (const char* kind : kinds) {
      const auto fake0 = std::chrono::steady_clock::now();
      const long long true0 = TrueMonoNs();
      if (std::strcmp(kind, "cv_steady") == 0) {
        std::unique_lock lock(m);
        const auto deadline = std::chrono::steady_clock::now() + ms;
        while (cv.wait_until(lock, deadline) != std::cv_status::timeout) {
        }
      } else if (std::strcmp(kind, "sleep_until") == 0) {
        std::this_thread::sleep_until(std::chrono::steady_clock::now() + ms);
      } else if (std::strcmp(kind, "cv_system") == 0) {
        std::unique_lock lock(m);
        const auto deadline = std::chrono::system_clock::now() + ms;
        while (cv.wait_until(lock, deadline) != std::cv_status::timeout) {
        }
      } else if (std::strcmp(kind, "timedwait_mono") == 0) {
        TimedWait(CLOCK_MONOTONIC, ms);
      } else if (std::strcmp(kind, "timedwait_real") == 0) {
        TimedWait(CLOCK_REALTIME, ms);
      } else {
        std::this_thread::sleep_for(ms);
      }
      std::printf("%s %lld %lld\n", kind, Ns<std::chrono::steady_clock>(std::chrono::steady_clock::now()) -
                                              Ns<std::chrono::steady_clock>(fake0),
                  TrueMonoNs() - true0);
      std::fflush(stdout);
    }
  }
}

timespec MonoIn(long long ns) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const long long sum = static_cast<long long>(ts.tv_nsec) + ns;
  ts.tv_sec += static_cast<time_t>(sum / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(sum % 1'000'000'000);
  return ts;
}

// Each call ends at once or after 1 ms; what matters is which library it passes through.
int Chain() {
  const timespec soon = MonoIn(1'000'000);
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_t cond;
  pthread_cond_init(&cond, &attr);
  pthread_mutex_lock(&mutex);
  while (pthread_cond_clockwait(&cond, &mutex, CLOCK_MONOTONIC, &soon) == 0) {
  }
  pthread_mutex_unlock(&mutex);
  pthread_cond_destroy(&cond);
  if (pthread_mutex_clocklock(&mutex, CLOCK_MONOTONIC, &soon) == 0) pthread_mutex_unlock(&mutex);
  sem_t sem;
  sem_init(&sem, 0, 0);
  sem_clockwait(&sem, CLOCK_MONOTONIC, &soon);
  sem_destroy(&sem);
  const timespec ms{0, 1'000'000};
  nanosleep(&ms, nullptr);
  poll(nullptr, 0, 1);
  for (const char* name : {"clock_gettime", "clock_nanosleep", "pthread_cond_clockwait", "sem_clockwait",
                           "pthread_mutex_clocklock", "poll"}) {
    std::printf("chain %s %ld\n", name, kvchaos_interposer_calls(name));
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "waits") == 0) Waits(std::chrono::milliseconds(std::atoll(argv[2])));
  if (argc == 2 && std::strcmp(argv[1], "chain") == 0) return Chain();
  if (argc == 1) Print();
  std::fprintf(stderr, "usage: clock_probe [waits MS | chain]\n");
  return 2;
}
