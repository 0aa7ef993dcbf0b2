// doctest's main() for every native test binary. doctest's declarations are
// already in from the suites' precompiled header (tests/native/CMakeLists.txt),
// so DOCTEST_CONFIG_IMPLEMENT is defined as well: including doctest.h again
// then adds only its implementation.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
