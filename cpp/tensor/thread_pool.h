// A fixed pool of worker threads for data-parallel loops (the GEMM's output
// tiles). Between loops a worker watches for the next one for a few hundred
// microseconds, then sleeps on a condition variable (futex waits under
// Emscripten). Builds without ATTNPLAY_THREADS (the default WebAssembly
// build) run every loop on the calling thread.
// Not here: what the loop bodies compute (tensor/gemm.cpp).
#pragma once

#include <cstddef>
#include <functional>

namespace attnplay::threads {

// Threads that run parallel_for bodies, the caller included (1 without threads).
int concurrency();

// Caps the threads used from now on to n (at least 1, at most the pool size,
// which is fixed when the pool starts). Returns the value now in effect.
int set_concurrency(int n);

// Calls body(i) once for every i in [0, count), spread over the pool, and
// returns when all calls have finished. The caller works too. body must not
// throw and must not call parallel_for itself; one thread at a time may call
// parallel_for (the engine's thread).
void parallel_for(std::ptrdiff_t count, const std::function<void(std::ptrdiff_t)>& body);

}  // namespace attnplay::threads
