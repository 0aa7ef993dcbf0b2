// Implementation of tensor/thread_pool.h. With ATTNPLAY_THREADS: one pool,
// started on first use with (hardware threads - 1) workers, at most
// kMaxThreads - 1 (the Emscripten build preloads that many web workers, so
// starting them never waits for the event loop). Without: a plain loop.
#include "tensor/thread_pool.h"

#include <algorithm>

#ifdef ATTNPLAY_THREADS
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace attnplay::threads {

#ifdef ATTNPLAY_THREADS

namespace {

constexpr int kMaxThreads = 4;  // keep in step with -sPTHREAD_POOL_SIZE in cpp/CMakeLists.txt
constexpr int kWatchRounds = 1 << 18;  // reads of published_ before a worker sleeps

// A loop is published by bumping generation_ under mutex_ and waking the
// workers. Workers join it while it is open_; the caller works too, closes it
// when no task is left and waits for the helpers that joined (a short wait:
// at most one task each). The caller never waits on a condition variable, so
// on a browser's main thread (where Emscripten can only spin) it spins only
// for that tail. A worker that finishes a loop watches for the next one for
// a while (kWatchRounds reads of an atomic, a few hundred microseconds) before it
// sleeps in a futex wait: a decoding step publishes hundreds of loops of a
// few tens of microseconds each, back to back, and waking a sleeping worker
// costs about as much as one of them.
class Pool {
 public:
  explicit Pool(int threads) : active_limit_(threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  int limit() const { return active_limit_; }
  void set_limit(int n) { active_limit_ = std::clamp(n, 1, size()); }

  void run(std::ptrdiff_t count, const std::function<void(std::ptrdiff_t)>& body) {
    const int helpers = static_cast<int>(std::min<std::ptrdiff_t>(active_limit_, count)) - 1;
    if (helpers <= 0) {
      for (std::ptrdiff_t i = 0; i < count; ++i) body(i);
      return;
    }
    body_ = &body;
    count_ = count;
    next_.store(0);
    seats_.store(helpers);
    open_.store(true);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++generation_;
      published_.store(generation_);
    }
    wake_.notify_all();
    work();
    open_.store(false);
    while (joined_.load() > 0) {
    }
    body_ = nullptr;
  }

 private:
  void work() {
    for (std::ptrdiff_t i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1)) (*body_)(i);
  }

  void worker_loop() {
    std::uint64_t seen = 0;
    for (;;) {
      for (int round = 0; round < kWatchRounds && published_.load() == seen; ++round) {
      }
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
      }
      joined_.fetch_add(1);
      if (open_.load() && seats_.fetch_sub(1) > 0) work();
      joined_.fetch_sub(1);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::uint64_t generation_ = 0;  // guarded by mutex_
  std::atomic<std::uint64_t> published_{0};  // generation_, readable without mutex_ (the watch before sleeping)
  bool stopping_ = false;         // guarded by mutex_
  const std::function<void(std::ptrdiff_t)>* body_ = nullptr;
  std::ptrdiff_t count_ = 0;
  std::atomic<std::ptrdiff_t> next_{0};
  std::atomic<int> seats_{0};   // helpers the open loop still wants
  std::atomic<int> joined_{0};  // helpers inside a loop right now
  std::atomic<bool> open_{false};
  std::atomic<int> active_limit_;
};

Pool& pool() {
  static Pool instance(std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads));
  return instance;
}

}  // namespace

int concurrency() { return pool().limit(); }

int set_concurrency(int n) {
  pool().set_limit(n);
  return pool().limit();
}

void parallel_for(std::ptrdiff_t count, const std::function<void(std::ptrdiff_t)>& body) { pool().run(count, body); }

#else

int concurrency() { return 1; }

int set_concurrency(int) { return 1; }

void parallel_for(std::ptrdiff_t count, const std::function<void(std::ptrdiff_t)>& body) {
  for (std::ptrdiff_t i = 0; i < count; ++i) body(i);
}

#endif

}  // namespace attnplay::threads
