// csrc/util/futex.h
// Waiting on a 32-bit atomic word without a mutex: Linux futex(2), private to
// the process. Elsewhere a short sleep stands in (correct, only slower). A
// waiter reads the word, checks its condition, then Wait(word, value_read):
// a waker changes the word before WakeAll, so no wake-up is lost.
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#else
#include <chrono>
#include <thread>
#endif

namespace chitta::futex {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex word is 32 bits");

// Sleeps while *word == expected; may return early (spuriously or on a signal).
inline void Wait(std::atomic<uint32_t>* word, uint32_t expected) {
#if defined(__linux__)
  (void)::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
                  nullptr, 0);
#else
  if (word->load() == expected) std::this_thread::sleep_for(std::chrono::microseconds(20));
#endif
}

// Wakes every thread waiting on word (call after changing it).
inline void WakeAll(std::atomic<uint32_t>* word) {
#if defined(__linux__)
  (void)::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr,
                  0);
#else
  (void)word;
#endif
}

}  // namespace chitta::futex
