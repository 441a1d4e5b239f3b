//===- ParallelFor.cpp - the CPU kernels' own threads ---------------------===//

#include "ParallelFor.h"

#include "memopt/runtime/CpuThreads.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace memopt::runtime::cpu {

namespace {

/// Workers that wait for a batch of parts, take them by index, and sleep
/// again. One batch at a time (kernels run one after another).
class Pool {
public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &t : workers)
      t.join();
  }

  void run(int parts, const std::function<void(int)> &part) {
    // One batch at a time: a second caller (another thread's executor, or a
    // part that splits again) runs its parts itself, in order.
    std::unique_lock<std::mutex> busy(running, std::try_to_lock);
    if (!busy) {
      for (int i = 0; i < parts; ++i)
        part(i);
      return;
    }
    std::unique_lock<std::mutex> lock(mutex);
    while (static_cast<int>(workers.size()) < parts - 1)
      workers.emplace_back([this] { work(); });
    current = &part;
    total = parts;
    next = 1; // part 0 is the caller's
    unfinished = parts - 1;
    error = nullptr;
    ++batch;
    lock.unlock();
    wake.notify_all();
    std::exception_ptr mine;
    try {
      part(0);
    } catch (...) {
      mine = std::current_exception();
    }
    lock.lock();
    done.wait(lock, [this] { return unfinished == 0; });
    current = nullptr;
    std::exception_ptr theirs = error;
    lock.unlock();
    if (mine)
      std::rethrow_exception(mine);
    if (theirs)
      std::rethrow_exception(theirs);
  }

private:
  void work() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      wake.wait(lock,
                [&] { return stopping || (batch != seen && next < total); });
      if (stopping)
        return;
      const int i = next++;
      if (next >= total)
        seen = batch;
      const std::function<void(int)> *f = current;
      lock.unlock();
      std::exception_ptr failed;
      try {
        (*f)(i);
      } catch (...) {
        failed = std::current_exception();
      }
      lock.lock();
      if (failed && !error)
        error = failed;
      if (--unfinished == 0)
        done.notify_one();
    }
  }

  std::mutex running, mutex;
  std::condition_variable wake, done;
  std::vector<std::thread> workers;
  const std::function<void(int)> *current = nullptr;
  uint64_t batch = 0;
  int total = 0, next = 0, unfinished = 0;
  bool stopping = false;
  std::exception_ptr error;
};

Pool &pool() {
  static Pool instance;
  return instance;
}

/// OpenBLAS single-threaded for the lifetime of the object (each part's
/// product runs on its own thread), then as before.
class SingleThreadedBlas {
public:
  SingleThreadedBlas() : saved(cpuThreads()) {
    if (saved > 1)
      setCpuThreads(1);
  }
  ~SingleThreadedBlas() {
    if (saved > 1)
      setCpuThreads(saved);
  }

private:
  int saved;
};

} // namespace

int kernelThreads() { return std::max(1, cpuThreads()); }

void parallelFor(int parts, const std::function<void(int)> &part) {
  if (parts <= 1) {
    if (parts == 1)
      part(0);
    return;
  }
  SingleThreadedBlas blas;
  pool().run(parts, part);
}

} // namespace memopt::runtime::cpu
