// Clang thread-safety annotations (-Wthread-safety): shared state says which mutex guards it and
// the compiler checks every access. They expand to nothing on other compilers.
#pragma once

#if defined(__clang__)
#define KVCHAOS_TSA(x) __attribute__((x))
#else
#define KVCHAOS_TSA(x)
#endif

#define CAPABILITY(x) KVCHAOS_TSA(capability(x))
#define SCOPED_CAPABILITY KVCHAOS_TSA(scoped_lockable)
#define GUARDED_BY(x) KVCHAOS_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) KVCHAOS_TSA(pt_guarded_by(x))
#define REQUIRES(...) KVCHAOS_TSA(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) KVCHAOS_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) KVCHAOS_TSA(release_capability(__VA_ARGS__))
#define EXCLUDES(...) KVCHAOS_TSA(locks_excluded(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS KVCHAOS_TSA(no_thread_safety_analysis)
