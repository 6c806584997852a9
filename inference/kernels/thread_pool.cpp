// ThreadPool: persistent workers that spin briefly for the next Run() (a
// forward pass issues ~100 per token) and then sleep on a futex.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "inference/kernels/kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RAGD_CPU_RELAX() _mm_pause()
#else
#define RAGD_CPU_RELAX() std::this_thread::yield()
#endif

namespace ragd::inference {
namespace {
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(300);
}  // namespace

// Work is handed out in chunks from one atomic word, `work` =
// generation << 32 | chunk count << 16 | next chunk, claimed by
// compare-exchange, so each chunk runs exactly once and a thread that wakes up
// late (or is preempted) simply claims less. The chunk count lives in the same
// word as the generation, so a stale thread can never claim a chunk of a run
// that has ended. Run() uses one chunk per thread-sized range (fn gets the
// range index); RunDynamic() uses `grain`-sized chunks (fn gets the
// participant index). fn, n, grain and the mode are written before the word
// is published and stay unchanged until every chunk has completed, which the
// caller waits for.
struct ThreadPool::Impl {
  static constexpr int64_t kMaxChunks = 0xFFFF;

  int n_threads = 1;
  std::vector<std::thread> workers;
  const std::function<void(int64_t, int64_t, int)>* fn = nullptr;
  int64_t n = 0, grain = 0, n_chunks = 0;
  bool per_range_index = false;
  std::atomic<uint64_t> work{0};
  std::atomic<uint32_t> generation{0};
  std::atomic<int> sleepers{0};
  std::atomic<int64_t> completed{0};
  std::atomic<bool> stop{false};

  void Participate(int t, uint32_t gen) {
    for (;;) {
      uint64_t v = work.load(std::memory_order_acquire);
      if (static_cast<uint32_t>(v >> 32) != gen) return;
      const int64_t c = static_cast<int64_t>(v & 0xFFFF);
      const int64_t limit = static_cast<int64_t>((v >> 16) & 0xFFFF);
      if (c >= limit) return;
      if (!work.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel)) continue;
      // Claimed: the run cannot end before this chunk completes.
      int64_t begin, end;
      if (per_range_index) {
        begin = n * c / limit;
        end = n * (c + 1) / limit;
      } else {
        begin = c * grain;
        end = begin + grain < n ? begin + grain : n;
      }
      if (begin < end) (*fn)(begin, end, per_range_index ? static_cast<int>(c) : t);
      completed.fetch_add(1, std::memory_order_acq_rel);
    }
  }

  void WorkerLoop(int t) {
    uint32_t seen = 0;
    for (;;) {
      // Spin for a while, then sleep until the generation changes.
      auto start = std::chrono::steady_clock::now();
      int spins = 0;
      while (generation.load(std::memory_order_acquire) == seen) {
        RAGD_CPU_RELAX();
        if (++spins % 256 == 0 && std::chrono::steady_clock::now() - start > kSpinBeforeSleep) {
          sleepers.fetch_add(1);
          generation.wait(seen);
          sleepers.fetch_sub(1);
          start = std::chrono::steady_clock::now();
        }
      }
      seen = generation.load(std::memory_order_acquire);
      if (stop.load()) return;
      Participate(t, seen);
    }
  }

  void Execute(int64_t total, int64_t chunk, int64_t chunks, bool range_index,
               const std::function<void(int64_t, int64_t, int)>& f) {
    fn = &f;
    n = total;
    grain = chunk;
    n_chunks = chunks;
    per_range_index = range_index;
    completed.store(0, std::memory_order_relaxed);
    const uint32_t gen = generation.load(std::memory_order_relaxed) + 1;
    work.store(static_cast<uint64_t>(gen) << 32 | static_cast<uint64_t>(chunks) << 16,
               std::memory_order_release);
    generation.store(gen, std::memory_order_release);
    if (sleepers.load() > 0) generation.notify_all();
    Participate(0, gen);
    int spins = 0;
    while (completed.load(std::memory_order_acquire) != n_chunks) {
      RAGD_CPU_RELAX();
      if (++spins > 4096) std::this_thread::yield();  // a worker was preempted mid-chunk
    }
  }
};

ThreadPool::ThreadPool(int n_threads, int nice) : impl_(std::make_unique<Impl>()) {
  if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
  n_threads = std::clamp(n_threads, 1, 1024);
  impl_->n_threads = n_threads;
  for (int t = 1; t < n_threads; ++t) {
    impl_->workers.emplace_back([this, t, nice] {
      if (nice > 0) SetCurrentThreadNice(nice);
      impl_->WorkerLoop(t);
    });
  }
}

void SetCurrentThreadNice(int nice) {
  // Linux keeps niceness per thread; failure (a sandbox) only costs priority.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), std::clamp(nice, 0, 19));
}

ThreadPool::~ThreadPool() {
  impl_->stop.store(true);
  impl_->generation.fetch_add(1);
  impl_->generation.notify_all();
  for (auto& w : impl_->workers) w.join();
}

int ThreadPool::size() const { return impl_->n_threads; }

void ThreadPool::Run(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  if (impl_->n_threads == 1) {
    fn(0, n, 0);
    return;
  }
  impl_->Execute(n, 0, impl_->n_threads, /*range_index=*/true, fn);
}

void ThreadPool::RunDynamic(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (impl_->n_threads == 1 || n <= grain) {
    fn(0, n, 0);
    return;
  }
  grain = std::max(grain, (n + Impl::kMaxChunks - 1) / Impl::kMaxChunks);
  impl_->Execute(n, grain, (n + grain - 1) / grain, /*range_index=*/false, fn);
}

}  // namespace ragd::inference
