// clock_chain_interposer: a library clock_probe links, standing where a sanitizer's runtime stands
// (TSan's interceptors: unversioned definitions after the clock preload in the lookup order). It
// counts the calls that reach it and hands each on to the next definition. The clock preload's test
// checks that every function the preload replaces still reaches it: one that jumped straight to
// glibc would hide the call from TSan (which then reports a double lock of the wait's mutex).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

enum { kClockGettime, kClockNanosleep, kCondClockwait, kSemClockwait, kMutexClocklock, kPoll, kCounted };
static const char* const kNames[kCounted] = {"clock_gettime", "clock_nanosleep", "pthread_cond_clockwait",
                                             "sem_clockwait", "pthread_mutex_clocklock", "poll"};
static atomic_long g_calls[kCounted];

// Counts a call of `which` and sets *fn to the next definition (through void**, as ISO C has no
// cast from an object pointer to a function pointer).
static void Next(int which, void* fn) {
  atomic_fetch_add_explicit(&g_calls[which], 1, memory_order_relaxed);
  *(void**)fn = dlsym(RTLD_NEXT, kNames[which]);
}

// How many calls of `name` reached this library; -1 for a name it does not count.
EXPORT long kvchaos_interposer_calls(const char* name) {
  for (int i = 0; i < kCounted; ++i) {
    if (strcmp(name, kNames[i]) == 0) return atomic_load(&g_calls[i]);
  }
  return -1;
}

EXPORT int clock_gettime(clockid_t c, struct timespec* ts) {
  int (*next)(clockid_t, struct timespec*);
  Next(kClockGettime, &next);
  return next(c, ts);
}

EXPORT int clock_nanosleep(clockid_t c, int flags, const struct timespec* req, struct timespec* rem) {
  int (*next)(clockid_t, int, const struct timespec*, struct timespec*);
  Next(kClockNanosleep, &next);
  return next(c, flags, req, rem);
}

EXPORT int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t c,
                                  const struct timespec* abstime) {
  int (*next)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);
  Next(kCondClockwait, &next);
  return next(cond, mutex, c, abstime);
}

EXPORT int sem_clockwait(sem_t* sem, clockid_t c, const struct timespec* abstime) {
  int (*next)(sem_t*, clockid_t, const struct timespec*);
  Next(kSemClockwait, &next);
  return next(sem, c, abstime);
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t c, const struct timespec* abstime) {
  int (*next)(pthread_mutex_t*, clockid_t, const struct timespec*);
  Next(kMutexClocklock, &next);
  return next(mutex, c, abstime);
}

EXPORT int poll(struct pollfd* fds, nfds_t n, int timeout_ms) {
  int (*next)(struct pollfd*, nfds_t, int);
  Next(kPoll, &next);
  return next(fds, n, timeout_ms);
}
