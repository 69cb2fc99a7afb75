#ifndef BRIGADE_CORE_CHECK_H_
#define BRIGADE_CORE_CHECK_H_

// BRIGADE_CHECK: stops the process when an invariant that cannot fail in a correct program does
// fail. Bad input never reaches one of these (it gets a Status); a failing check is a bug, and
// stopping with the place and the reason beats answering from a state nobody reasoned about.
// Active in every build type.

#include <cstdio>
#include <cstdlib>

#define BRIGADE_CHECK(condition, message)                                                   \
  do {                                                                                      \
    if (!(condition)) [[unlikely]] {                                                        \
      std::fprintf(stderr, "%s:%d: check failed: %s: %s\n", __FILE__, __LINE__, #condition, \
                   (message));                                                              \
      std::abort();                                                                         \
    }                                                                                       \
  } while (false)

#endif  // BRIGADE_CORE_CHECK_H_
