// EngineSlot: where the gRPC services find the LogEngine. dictlogd starts serving
// (health NOT_SERVING) before its store is open; until Set, calls get UNAVAILABLE.
//
// Thread safety: Set may be called once, from any thread, while other threads call
// ready() and operator->; the engine is borrowed and must outlive the slot's users.
#ifndef DICTLOG_SERVER_SERVICE_ENGINE_SLOT_H_
#define DICTLOG_SERVER_SERVICE_ENGINE_SLOT_H_

#include <grpcpp/support/status.h>

#include <atomic>

#include "server/engine/log_engine.h"

namespace dictlog::service {

class EngineSlot {
 public:
  // Empty: the store is still opening.
  EngineSlot() = default;
  explicit EngineSlot(engine::LogEngine* engine) : engine_(engine) {}
  EngineSlot(const EngineSlot&) = delete;
  EngineSlot& operator=(const EngineSlot&) = delete;

  void Set(engine::LogEngine* engine) { engine_.store(engine, std::memory_order_release); }
  bool ready() const { return get() != nullptr; }
  engine::LogEngine* get() const { return engine_.load(std::memory_order_acquire); }
  // Only after ready() returned true.
  engine::LogEngine* operator->() const { return get(); }

  // UNAVAILABLE while the store is opening, else OK.
  grpc::Status Check() const {
    if (ready()) return grpc::Status::OK;
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "dictlogd is opening its store; retry shortly");
  }

 private:
  std::atomic<engine::LogEngine*> engine_{nullptr};
};

}  // namespace dictlog::service

#endif  // DICTLOG_SERVER_SERVICE_ENGINE_SLOT_H_
