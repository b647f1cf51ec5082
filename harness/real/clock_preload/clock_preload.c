// clock_preload: an LD_PRELOAD library that gives one process (a `kvchaos node` of a real run
// with clock faults) its own clocks, as the simulator's SimClock gives one simulated node its own:
// a monotonic clock that may run fast or slow (drift) and never goes back, and a wall clock that is
// the monotonic one plus a step that may go either way (clock-jump). The machine's clocks are never
// touched. Written in C with no state that needs a constructor of another library, so it is safe
// to load before libstdc++.
//
// The clock file ($KVCHAOS_CLOCK_FILE; harness/real/fake_clock.h writes it by rename(2)) holds
// '#' comment lines and one line
//     ref_ns=<R> gain_ns=<G> drift_ppb=<P> wall_step_ns=<S>
// in integers, over the machine's true CLOCK_MONOTONIC reading T:
//     fake monotonic(T) = T + G + floor((T - R) * P / 1e9)
//     fake wall(T)      = true wall(T) + (fake monotonic(T) - T) + S
// so a drift scales both clocks and a wall step moves the wall clock only. The same gain moves
// CLOCK_MONOTONIC_RAW, _COARSE and CLOCK_BOOTTIME; CLOCK_REALTIME_COARSE and CLOCK_TAI follow the
// wall clock. The file is reread at most every kRereadNs; a missing file keeps the clocks last read
// (true clocks before any), a malformed one too, with one message on stderr.
//
// Waits with absolute deadlines on a faked clock (pthread_cond_clockwait/_timedwait,
// clock_nanosleep, sem_clockwait/_timedwait, pthread_mutex_clocklock/_timedlock) and sleeps
// (nanosleep, usleep, sleep: relative to the fake monotonic clock) are translated into true
// CLOCK_MONOTONIC deadlines and never wait longer than kRecheckNs at a time, so a clock file
// rewritten mid-wait is honoured within that. A condition-variable wait cut short that way returns
// as a spurious wakeup (callers re-check their predicate and clock), never as a timeout before the
// fake deadline. Relative timeouts of poll/ppoll/epoll_wait/epoll_pwait are scaled by the rate at
// the call (not re-checked: fd waits are stateless to the kernel but a timeout return is final).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum {
  kBillion = 1000000000,
};
static const int64_t kRereadNs = 2 * 1000 * 1000;   // how stale the clock file may be
static const int64_t kRecheckNs = 50 * 1000 * 1000;  // the longest real wait between recomputations

__extension__ typedef __int128 Int128;

// ---- the real functions -------------------------------------------------------------------

static int (*real_clock_gettime)(clockid_t, struct timespec*);
static int (*real_clock_nanosleep)(clockid_t, int, const struct timespec*, struct timespec*);
static int (*real_pthread_cond_clockwait)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);
static int (*real_sem_clockwait)(sem_t*, clockid_t, const struct timespec*);
static int (*real_pthread_mutex_clocklock)(pthread_mutex_t*, clockid_t, const struct timespec*);
static int (*real_poll)(struct pollfd*, nfds_t, int);
static int (*real_ppoll)(struct pollfd*, nfds_t, const struct timespec*, const sigset_t*);
static int (*real_epoll_wait)(int, struct epoll_event*, int, int);
static int (*real_epoll_pwait)(int, struct epoll_event*, int, int, const sigset_t*);
static int (*real_gettimeofday)(struct timeval*, void*);

static pthread_once_t g_resolve_once = PTHREAD_ONCE_INIT;

// The next definition after this library, in the default (newest) version glibc gives dlsym: an
// interposer loaded after us stays in the chain. A sanitizer's runtime is one: TSan's unversioned
// pthread_cond_clockwait is how it learns that a wait releases and retakes the mutex, so asking
// for glibc's versioned symbol (dlvsym) would skip it and TSan would report a double lock.
static void* Next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == NULL) {
    static const char msg[] = "kvchaos clock preload: a libc function is missing: ";
    (void)!write(2, msg, sizeof msg - 1);
    (void)!write(2, name, strlen(name));
    (void)!write(2, "\n", 1);
    abort();
  }
  return f;
}

static void ResolveAll(void) {
  *(void**)&real_clock_gettime = Next("clock_gettime");
  *(void**)&real_clock_nanosleep = Next("clock_nanosleep");
  *(void**)&real_pthread_cond_clockwait = Next("pthread_cond_clockwait");
  *(void**)&real_sem_clockwait = Next("sem_clockwait");
  *(void**)&real_pthread_mutex_clocklock = Next("pthread_mutex_clocklock");
  *(void**)&real_poll = Next("poll");
  *(void**)&real_ppoll = Next("ppoll");
  *(void**)&real_epoll_wait = Next("epoll_wait");
  *(void**)&real_epoll_pwait = Next("epoll_pwait");
  *(void**)&real_gettimeofday = Next("gettimeofday");
}

static void Resolve(void) { pthread_once(&g_resolve_once, ResolveAll); }

// ---- the clock model, published by a sequence lock -------------------------------------------

typedef struct {
  int64_t ref_ns;
  int64_t gain_ns;
  int64_t drift_ppb;
  int64_t wall_step_ns;
} Model;

static const char* g_path;  // NULL: no clock file, every clock is true
static _Atomic uint64_t g_seq;
static _Atomic int64_t g_ref_ns, g_gain_ns, g_drift_ppb, g_wall_step_ns;
static _Atomic int64_t g_next_read_ns;
static atomic_flag g_reading = ATOMIC_FLAG_INIT;
static atomic_int g_warned;
// The highest reading handed out per monotonic clock: a rate change read a few ms late must not
// move a monotonic clock back.
enum { kMono, kMonoCoarse, kMonoRaw, kBoot, kMonoKinds };
static _Atomic int64_t g_high_ns[kMonoKinds];

static int64_t FloorDiv(Int128 a, int64_t b) {
  Int128 q = a / b;
  if (a % b != 0 && a < 0) --q;
  return (int64_t)q;
}

static int64_t CeilDiv(Int128 a, int64_t b) { return -FloorDiv(-a, b); }

static int64_t Ns(const struct timespec* ts) { return (int64_t)ts->tv_sec * kBillion + ts->tv_nsec; }

static struct timespec Ts(int64_t ns) {
  struct timespec ts = {(time_t)FloorDiv(ns, kBillion), 0};
  ts.tv_nsec = (long)(ns - (int64_t)ts.tv_sec * kBillion);
  return ts;
}

static int64_t TrueNs(clockid_t c) {
  struct timespec ts;
  real_clock_gettime(c, &ts);
  return Ns(&ts);
}

static void Warn(const char* what, const char* text) {
  if (atomic_exchange(&g_warned, 1)) return;
  char buf[512];
  const int n = snprintf(buf, sizeof buf, "kvchaos clock preload: %s: %s: %s\n", g_path, what, text);
  if (n > 0) (void)!write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

// Parses the data line into *m; 0 when the file says nothing usable.
static int Parse(char* text, Model* m) {
  int seen = 0;
  char* save = NULL;
  for (char* line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#' || line[0] == '\0') continue;
    const char* keys[4] = {"ref_ns=", "gain_ns=", "drift_ppb=", "wall_step_ns="};
    int64_t* fields[4] = {&m->ref_ns, &m->gain_ns, &m->drift_ppb, &m->wall_step_ns};
    char* p = line;
    for (int i = 0; i < 4; ++i) {
      while (*p == ' ') ++p;
      const size_t len = strlen(keys[i]);
      if (strncmp(p, keys[i], len) != 0) return 0;
      char* end = NULL;
      errno = 0;
      *fields[i] = strtoll(p + len, &end, 10);
      if (errno != 0 || end == p + len) return 0;
      p = end;
      seen |= 1 << i;
    }
    while (*p == ' ' || *p == '\r') ++p;
    if (*p != '\0') return 0;
    break;
  }
  // The simulator's range of drifts: the fake clocks keep running forward.
  return seen == 15 && m->drift_ppb > -kBillion / 2 && m->drift_ppb < kBillion;
}

static void Publish(const Model* m) {
  const uint64_t s = atomic_load_explicit(&g_seq, memory_order_relaxed);
  atomic_store_explicit(&g_seq, s + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&g_ref_ns, m->ref_ns, memory_order_relaxed);
  atomic_store_explicit(&g_gain_ns, m->gain_ns, memory_order_relaxed);
  atomic_store_explicit(&g_drift_ppb, m->drift_ppb, memory_order_relaxed);
  atomic_store_explicit(&g_wall_step_ns, m->wall_step_ns, memory_order_relaxed);
  atomic_store_explicit(&g_seq, s + 2, memory_order_release);
}

static void ReadFile(void) {
  const int saved = errno;
  char text[1024];
  ssize_t n = -1;
  const int fd = open(g_path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    n = read(fd, text, sizeof text - 1);
    close(fd);
  }
  if (n > 0) {
    text[n] = '\0';
    char copy[1024];
    memcpy(copy, text, (size_t)n + 1);
    Model m;
    if (Parse(text, &m)) {
      Publish(&m);
    } else {
      Warn("not a clock file (want 'ref_ns=N gain_ns=N drift_ppb=N wall_step_ns=N'; keeping the clocks read before)", copy);
    }
  }
  errno = saved;
}

// Rereads the file when the copy is older than kRereadNs; one thread at a time, the rest go on
// with the copy they have.
static void MaybeReread(int64_t true_mono_ns) {
  if (g_path == NULL || true_mono_ns < atomic_load_explicit(&g_next_read_ns, memory_order_relaxed)) return;
  if (atomic_flag_test_and_set_explicit(&g_reading, memory_order_acquire)) return;
  atomic_store_explicit(&g_next_read_ns, true_mono_ns + kRereadNs, memory_order_relaxed);
  ReadFile();
  atomic_flag_clear_explicit(&g_reading, memory_order_release);
}

static Model Load(void) {
  Model m;
  for (;;) {
    const uint64_t s1 = atomic_load_explicit(&g_seq, memory_order_acquire);
    m.ref_ns = atomic_load_explicit(&g_ref_ns, memory_order_relaxed);
    m.gain_ns = atomic_load_explicit(&g_gain_ns, memory_order_relaxed);
    m.drift_ppb = atomic_load_explicit(&g_drift_ppb, memory_order_relaxed);
    m.wall_step_ns = atomic_load_explicit(&g_wall_step_ns, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if ((s1 & 1) == 0 && s1 == atomic_load_explicit(&g_seq, memory_order_relaxed)) return m;
  }
}

// fake monotonic - true monotonic at true monotonic time t.
static int64_t GainAt(const Model* m, int64_t t) {
  if (m->drift_ppb == 0) return m->gain_ns;
  return m->gain_ns + FloorDiv((Int128)(t - m->ref_ns) * m->drift_ppb, kBillion);
}

// The earliest true monotonic time at which the fake monotonic clock reads `fake`.
static int64_t TrueWhenMonoReads(const Model* m, int64_t fake) {
  const Int128 need = (Int128)fake - m->ref_ns - m->gain_ns;
  return m->ref_ns + CeilDiv(need * kBillion, kBillion + m->drift_ppb);
}

typedef enum { kNotFaked, kMonoFamily, kWallFamily } Family;

static Family FamilyOf(clockid_t c, int* kind) {
  switch (c) {
    case CLOCK_MONOTONIC: *kind = kMono; return kMonoFamily;
    case CLOCK_MONOTONIC_COARSE: *kind = kMonoCoarse; return kMonoFamily;
    case CLOCK_MONOTONIC_RAW: *kind = kMonoRaw; return kMonoFamily;
    case CLOCK_BOOTTIME: *kind = kBoot; return kMonoFamily;
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_TAI: return kWallFamily;
    default: return kNotFaked;
  }
}

// The fake reading of clock c (a faked one), with the true monotonic time it was taken at.
static int64_t FakeNs(const Model* m, clockid_t c, Family f, int64_t* true_mono_ns) {
  const int64_t t = TrueNs(CLOCK_MONOTONIC);
  *true_mono_ns = t;
  const int64_t raw = c == CLOCK_MONOTONIC ? t : TrueNs(c);
  return raw + GainAt(m, t) + (f == kWallFamily ? m->wall_step_ns : 0);
}

static int64_t NoLowerThanBefore(int kind, int64_t v) {
  int64_t prev = atomic_load_explicit(&g_high_ns[kind], memory_order_relaxed);
  while (prev < v && !atomic_compare_exchange_weak_explicit(&g_high_ns[kind], &prev, v, memory_order_relaxed,
                                                            memory_order_relaxed)) {
  }
  return v > prev ? v : prev;
}

// ---- deadlines ----------------------------------------------------------------------------

// One step of a wait for fake deadline `deadline_ns` on clock c: whether it has passed, and
// otherwise the true CLOCK_MONOTONIC deadline of the next real wait (*capped when that stops
// short of the fake deadline, to recompute then).
typedef struct {
  int passed;
  int capped;
  int64_t true_deadline_ns;
  int64_t fake_left_ns;  // fake time left (on clock c) when computed
} Step;

static Step NextStep(clockid_t c, Family f, int64_t deadline_ns) {
  Step s = {0, 0, 0, 0};
  int64_t t = 0;
  MaybeReread(TrueNs(CLOCK_MONOTONIC));
  const Model m = Load();
  const int64_t now = FakeNs(&m, c, f, &t);
  s.fake_left_ns = deadline_ns - now;
  if (s.fake_left_ns <= 0) {
    s.passed = 1;
    s.true_deadline_ns = t;
    return s;
  }
  // Time left on clock c is time left on the fake monotonic clock (both move with the same gain).
  const int64_t fake_mono_now = t + GainAt(&m, t);
  const int64_t want = TrueWhenMonoReads(&m, fake_mono_now + s.fake_left_ns);
  s.capped = want > t + kRecheckNs;
  s.true_deadline_ns = s.capped ? t + kRecheckNs : want;
  return s;
}

static int Faking(void) {
  Resolve();
  return g_path != NULL;
}

static int ValidTs(const struct timespec* ts) {
  return ts != NULL && ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < kBillion;
}

// ---- clocks -------------------------------------------------------------------------------

EXPORT int clock_gettime(clockid_t c, struct timespec* ts) {
  Resolve();
  int kind = 0;
  const Family f = FamilyOf(c, &kind);
  if (g_path == NULL || f == kNotFaked) return real_clock_gettime(c, ts);
  MaybeReread(TrueNs(CLOCK_MONOTONIC));
  const Model m = Load();
  int64_t t = 0;
  int64_t v = FakeNs(&m, c, f, &t);
  if (f == kMonoFamily) v = NoLowerThanBefore(kind, v);
  *ts = Ts(v);
  return 0;
}

EXPORT int gettimeofday(struct timeval* tv, void* tz) {
  Resolve();
  if (g_path == NULL) return real_gettimeofday(tv, tz);
  if (tz != NULL) real_gettimeofday(NULL, tz);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

EXPORT time_t time(time_t* out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}

EXPORT int timespec_get(struct timespec* ts, int base) {
  if (base != TIME_UTC) return 0;
  clock_gettime(CLOCK_REALTIME, ts);
  return base;
}

// ---- sleeps -------------------------------------------------------------------------------

EXPORT int clock_nanosleep(clockid_t c, int flags, const struct timespec* req, struct timespec* rem) {
  int kind = 0;
  const Family f = FamilyOf(c, &kind);
  if (!Faking() || f == kNotFaked || !ValidTs(req) || c == CLOCK_MONOTONIC_RAW || c == CLOCK_MONOTONIC_COARSE ||
      c == CLOCK_REALTIME_COARSE) {
    return real_clock_nanosleep(c, flags, req, rem);  // the kernel's answer, EINVAL included
  }
  int64_t deadline = Ns(req);
  if ((flags & TIMER_ABSTIME) == 0) {
    int64_t t = 0;
    const Model m = Load();
    deadline += FakeNs(&m, c, f, &t);
  }
  for (;;) {
    const Step s = NextStep(c, f, deadline);
    if (s.passed) return 0;
    const struct timespec until = Ts(s.true_deadline_ns);
    const int r = real_clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    if (r == EINTR && (flags & TIMER_ABSTIME) == 0 && rem != NULL) {
      const Step left = NextStep(c, f, deadline);
      *rem = Ts(left.passed ? 0 : left.fake_left_ns);
    }
    if (r != 0) return r;
  }
}

EXPORT int nanosleep(const struct timespec* req, struct timespec* rem) {
  const int r = clock_nanosleep(CLOCK_MONOTONIC, 0, req, rem);
  if (r == 0) return 0;
  errno = r;
  return -1;
}

EXPORT int usleep(useconds_t us) {
  const struct timespec req = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  return nanosleep(&req, NULL);
}

EXPORT unsigned int sleep(unsigned int seconds) {
  const struct timespec req = {(time_t)seconds, 0};
  struct timespec rem = {0, 0};
  if (nanosleep(&req, &rem) == 0) return 0;
  return (unsigned int)rem.tv_sec + (rem.tv_nsec > 0 ? 1 : 0);
}

// ---- waits with absolute deadlines --------------------------------------------------------

static int CondWait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t c, const struct timespec* abstime) {
  int kind = 0;
  const Family f = FamilyOf(c, &kind);
  if (!Faking() || (c != CLOCK_MONOTONIC && c != CLOCK_REALTIME) || !ValidTs(abstime)) {
    return real_pthread_cond_clockwait(cond, mutex, c, abstime);
  }
  const int64_t deadline = Ns(abstime);
  const Step s = NextStep(c, f, deadline);
  const struct timespec until = Ts(s.true_deadline_ns);
  const int r = real_pthread_cond_clockwait(cond, mutex, CLOCK_MONOTONIC, &until);
  // Cut short to recompute: a spurious wakeup, unless the fake deadline has passed meanwhile.
  if (r == ETIMEDOUT && s.capped && !NextStep(c, f, deadline).passed) return 0;
  return r;
}

EXPORT int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t c,
                                  const struct timespec* abstime) {
  return CondWait(cond, mutex, c, abstime);
}

// glibc keeps a condition variable's clock in bit 1 of __wrefs (nptl/pthread_cond_common.c:
// __PTHREAD_COND_CLOCK_MONOTONIC_MASK); the test of this library checks both clocks.
EXPORT int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const struct timespec* abstime) {
  const unsigned int wrefs = atomic_load_explicit((_Atomic unsigned int*)&cond->__data.__wrefs, memory_order_relaxed);
  return CondWait(cond, mutex, (wrefs & 2u) != 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME, abstime);
}

// Locks and semaphores keep their state in themselves: a wait cut short is simply waited again.
EXPORT int sem_clockwait(sem_t* sem, clockid_t c, const struct timespec* abstime) {
  int kind = 0;
  const Family f = FamilyOf(c, &kind);
  if (!Faking() || (c != CLOCK_MONOTONIC && c != CLOCK_REALTIME) || !ValidTs(abstime)) {
    return real_sem_clockwait(sem, c, abstime);
  }
  for (;;) {
    const Step s = NextStep(c, f, Ns(abstime));
    const struct timespec until = Ts(s.true_deadline_ns);
    if (real_sem_clockwait(sem, CLOCK_MONOTONIC, &until) == 0) return 0;
    if (errno != ETIMEDOUT || !s.capped) return -1;
  }
}

EXPORT int sem_timedwait(sem_t* sem, const struct timespec* abstime) { return sem_clockwait(sem, CLOCK_REALTIME, abstime); }

EXPORT int pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t c, const struct timespec* abstime) {
  int kind = 0;
  const Family f = FamilyOf(c, &kind);
  if (!Faking() || (c != CLOCK_MONOTONIC && c != CLOCK_REALTIME) || !ValidTs(abstime)) {
    return real_pthread_mutex_clocklock(mutex, c, abstime);
  }
  for (;;) {
    const Step s = NextStep(c, f, Ns(abstime));
    const struct timespec until = Ts(s.true_deadline_ns);
    const int r = real_pthread_mutex_clocklock(mutex, CLOCK_MONOTONIC, &until);
    if (r != ETIMEDOUT || !s.capped) return r;
  }
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t* mutex, const struct timespec* abstime) {
  return pthread_mutex_clocklock(mutex, CLOCK_REALTIME, abstime);
}

// ---- relative fd-wait timeouts: scaled by the rate at the call ---------------------------

static int64_t TrueFromFakeSpan(int64_t fake_ns) {
  MaybeReread(TrueNs(CLOCK_MONOTONIC));
  const Model m = Load();
  if (m.drift_ppb == 0) return fake_ns;
  return CeilDiv((Int128)fake_ns * kBillion, kBillion + m.drift_ppb);
}

static int ScaledMs(int timeout_ms) {
  if (timeout_ms <= 0 || !Faking()) return timeout_ms;
  const int64_t ns = TrueFromFakeSpan((int64_t)timeout_ms * 1000000);
  const int64_t ms = CeilDiv(ns, 1000000);
  return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

EXPORT int poll(struct pollfd* fds, nfds_t n, int timeout_ms) {
  Resolve();
  return real_poll(fds, n, ScaledMs(timeout_ms));
}

EXPORT int ppoll(struct pollfd* fds, nfds_t n, const struct timespec* timeout, const sigset_t* mask) {
  if (!Faking() || !ValidTs(timeout)) return real_ppoll(fds, n, timeout, mask);
  const struct timespec scaled = Ts(TrueFromFakeSpan(Ns(timeout)));
  return real_ppoll(fds, n, &scaled, mask);
}

EXPORT int epoll_wait(int epfd, struct epoll_event* events, int max, int timeout_ms) {
  Resolve();
  return real_epoll_wait(epfd, events, max, ScaledMs(timeout_ms));
}

EXPORT int epoll_pwait(int epfd, struct epoll_event* events, int max, int timeout_ms, const sigset_t* mask) {
  Resolve();
  return real_epoll_pwait(epfd, events, max, ScaledMs(timeout_ms), mask);
}

// ---- load ---------------------------------------------------------------------------------

__attribute__((constructor)) static void Init(void) {
  Resolve();
  const char* path = getenv("KVCHAOS_CLOCK_FILE");
  if (path == NULL || *path == '\0') return;
  g_path = path;
  ReadFile();  // the first clock read is already the node's clock
  atomic_store(&g_next_read_ns, TrueNs(CLOCK_MONOTONIC) + kRereadNs);
}
