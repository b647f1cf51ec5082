// What every fuzz target shares: FUZZ_CHECK(cond, what) aborts with the input's story when a
// property of the code under test breaks (libFuzzer then keeps the input as a crash), so targets
// check data in pairs (parse, write back, parse again) and not only "it did not crash".
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, what)                                                                \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s: %s\n", __FILE__, __LINE__, #cond, \
                   std::string(what).c_str());                                                \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
