// ThreadSanitizer annotations for Debian's abseil synchronization library, which is not
// built with -fsanitize=thread: without them TSan cannot see that absl::Mutex,
// absl::CondVar and absl::Notification order memory, and reports every access guarded
// by them as a race. Only in `--config=tsan` builds (bazel/system:absl depends on this
// then). The link wraps (-Wl,--wrap, see BUILD.bazel) each call from dictlog's code to
// these functions: a lock is an acquire of the mutex's address, an unlock a release;
// waits release, then acquire again; Notify releases the notification's address, a
// successful wait acquires it. A wait's Condition is evaluated by abseil with the mutex
// held, on the waiting thread or on one that unlocks: it is wrapped so that each
// evaluation acquires the mutex's address first and releases it after. Readers' locks
// are modelled like writers' (readers then synchronize with each other too: that can
// hide a race between two readers, never invent one).
//
// Thread safety: as the wrapped functions.
#include <sanitizer/tsan_interface.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

using absl::CondVar;
using absl::Condition;
using absl::Duration;
using absl::Mutex;
using absl::Notification;
using absl::Time;

namespace {

// A Condition evaluated as if under the mutex (abseil holds it then).
class HeldCondition {
 public:
  HeldCondition(Mutex* mu, const Condition& condition)
      : mu_(mu), condition_(&condition), held_(&HeldCondition::Eval, this) {}
  const Condition& get() const { return held_; }

 private:
  static bool Eval(HeldCondition* self) {
    __tsan_acquire(self->mu_);
    const bool result = self->condition_->Eval();
    __tsan_release(self->mu_);
    return result;
  }

  Mutex* const mu_;
  const Condition* const condition_;
  const Condition held_;
};

}  // namespace

// Name of the real function (__real_X) and of its wrapper (__wrap_X), X mangled.
#define DICTLOG_REAL(x) __real_##x
#define DICTLOG_WRAP(x) __wrap_##x

// A function `void X(Mutex*)` that acquires after (lock) or releases before (unlock).
#define DICTLOG_LOCK(x)                                  \
  void DICTLOG_REAL(x)(Mutex * mu);                      \
  void DICTLOG_WRAP(x)(Mutex * mu) {                     \
    DICTLOG_REAL(x)(mu);                                 \
    __tsan_acquire(mu);                                  \
  }
#define DICTLOG_UNLOCK(x)                                \
  void DICTLOG_REAL(x)(Mutex * mu);                      \
  void DICTLOG_WRAP(x)(Mutex * mu) {                     \
    __tsan_release(mu);                                  \
    DICTLOG_REAL(x)(mu);                                 \
  }
#define DICTLOG_TRY_LOCK(x)                              \
  bool DICTLOG_REAL(x)(Mutex * mu);                      \
  bool DICTLOG_WRAP(x)(Mutex * mu) {                     \
    const bool locked = DICTLOG_REAL(x)(mu);             \
    if (locked) __tsan_acquire(mu);                      \
    return locked;                                       \
  }
// Mutex::LockWhen* (`R X(Mutex*, const Condition&, A...)`): holds the lock after.
#define DICTLOG_LOCK_WHEN(R, x, ...)                                 \
  R DICTLOG_REAL(x)(Mutex * mu, const Condition& c, ##__VA_ARGS__);  \
  R DICTLOG_WRAP(x)(Mutex * mu, const Condition& c, ##__VA_ARGS__)
// Mutex::Await* and CondVar::Wait*: release, wait, hold the lock again.
#define DICTLOG_AWAIT(R, x, ...)                                     \
  R DICTLOG_REAL(x)(Mutex * mu, const Condition& c, ##__VA_ARGS__);  \
  R DICTLOG_WRAP(x)(Mutex * mu, const Condition& c, ##__VA_ARGS__)

extern "C" {

DICTLOG_LOCK(_ZN4absl7debian35Mutex4LockEv)
DICTLOG_LOCK(_ZN4absl7debian35Mutex10ReaderLockEv)
DICTLOG_UNLOCK(_ZN4absl7debian35Mutex6UnlockEv)
DICTLOG_UNLOCK(_ZN4absl7debian35Mutex12ReaderUnlockEv)
DICTLOG_TRY_LOCK(_ZN4absl7debian35Mutex7TryLockEv)
DICTLOG_TRY_LOCK(_ZN4absl7debian35Mutex13ReaderTryLockEv)

DICTLOG_LOCK_WHEN(void, _ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE) {
  DICTLOG_REAL(_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE)
      (mu, HeldCondition(mu, c).get());
  __tsan_acquire(mu);
}
DICTLOG_LOCK_WHEN(void, _ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE) {
  DICTLOG_REAL(_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE)
      (mu, HeldCondition(mu, c).get());
  __tsan_acquire(mu);
}
DICTLOG_LOCK_WHEN(bool, _ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE,
                  Duration d) {
  const bool r = DICTLOG_REAL(
      _ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE)
      (mu, HeldCondition(mu, c).get(), d);
  __tsan_acquire(mu);
  return r;
}
DICTLOG_LOCK_WHEN(bool, _ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE,
                  Time t) {
  const bool r = DICTLOG_REAL(
      _ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE)
      (mu, HeldCondition(mu, c).get(), t);
  __tsan_acquire(mu);
  return r;
}

DICTLOG_AWAIT(void, _ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE) {
  __tsan_release(mu);
  DICTLOG_REAL(_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE)
      (mu, HeldCondition(mu, c).get());
  __tsan_acquire(mu);
}
DICTLOG_AWAIT(bool, _ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE,
              Duration d) {
  __tsan_release(mu);
  const bool r = DICTLOG_REAL(
      _ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE)
      (mu, HeldCondition(mu, c).get(), d);
  __tsan_acquire(mu);
  return r;
}
DICTLOG_AWAIT(bool, _ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE,
              Time t) {
  __tsan_release(mu);
  const bool r = DICTLOG_REAL(
      _ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE)
      (mu, HeldCondition(mu, c).get(), t);
  __tsan_acquire(mu);
  return r;
}

void __real__ZN4absl7debian37CondVar4WaitEPNS0_5MutexE(CondVar* cv, Mutex* mu);
void __wrap__ZN4absl7debian37CondVar4WaitEPNS0_5MutexE(CondVar* cv, Mutex* mu) {
  __tsan_release(mu);
  __real__ZN4absl7debian37CondVar4WaitEPNS0_5MutexE(cv, mu);
  __tsan_acquire(mu);
}
bool __real__ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE(
    CondVar* cv, Mutex* mu, Duration d);
bool __wrap__ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE(
    CondVar* cv, Mutex* mu, Duration d) {
  __tsan_release(mu);
  const bool r =
      __real__ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE(cv, mu, d);
  __tsan_acquire(mu);
  return r;
}

void __real__ZN4absl7debian312Notification6NotifyEv(Notification* n);
void __wrap__ZN4absl7debian312Notification6NotifyEv(Notification* n) {
  __tsan_release(n);
  __real__ZN4absl7debian312Notification6NotifyEv(n);
}
void __real__ZNK4absl7debian312Notification19WaitForNotificationEv(const Notification* n);
void __wrap__ZNK4absl7debian312Notification19WaitForNotificationEv(const Notification* n) {
  __real__ZNK4absl7debian312Notification19WaitForNotificationEv(n);
  __tsan_acquire(const_cast<Notification*>(n));
}
bool __real__ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE(
    const Notification* n, Duration d);
bool __wrap__ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE(
    const Notification* n, Duration d) {
  const bool r =
      __real__ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE(n, d);
  if (r) __tsan_acquire(const_cast<Notification*>(n));
  return r;
}

}  // extern "C"
