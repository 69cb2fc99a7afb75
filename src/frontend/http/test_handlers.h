#ifndef BRIGADE_FRONTEND_HTTP_TEST_HANDLERS_H_
#define BRIGADE_FRONTEND_HTTP_TEST_HANDLERS_H_

// Test support for the HTTP transport's tests: two HttpHandlers that record what reached them.
//   EchoHandler     answers at once with "<METHOD> <target> <body>".
//   HoldingHandler  keeps every responder for the test to answer later, from any thread, and
//                   counts the cancel callbacks the transport runs.
// Thread safety: both are called on io threads and read from the test's thread; every member is
// guarded by the handler's mutex.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "core/strings.h"
#include "frontend/http/http_handler.h"
#include "net/test_client.h"

namespace brigade::frontend::testing {

// Answers at once: "<METHOD> <target> <body>", recording what it saw.
class EchoHandler : public HttpHandler {
 public:
  void Handle(HttpRequest request, HttpResponder responder) override {
    {
      absl::MutexLock lock(&mu_);
      arrivals_.push_back(request.arrival_ns);
      ++calls_;
    }
    HttpResponse response;
    response.headers.push_back({"X-Path", std::string(request.path())});
    response.body = StrCat(request.method, " ", request.target, " ", request.body->view());
    responder.Send(std::move(response));
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  std::vector<int64_t> arrivals() {
    absl::MutexLock lock(&mu_);
    return arrivals_;
  }

 private:
  absl::Mutex mu_;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int64_t> arrivals_ ABSL_GUARDED_BY(mu_);
};

// Keeps every responder for the test to answer later, from its own thread.
class HoldingHandler : public HttpHandler {
 public:
  struct Held {
    HttpRequest request;
    std::optional<HttpResponder> responder;
    std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  };

  void Handle(HttpRequest request, HttpResponder responder) override {
    Held held{std::move(request), std::move(responder)};
    auto cancelled = held.cancelled;
    held.responder->OnCancel([this, cancelled] {
      cancelled->store(true);
      absl::MutexLock lock(&mu_);
      ++cancels_;
    });
    absl::MutexLock lock(&mu_);
    held_.push_back(std::move(held));
  }

  // Waits up to `timeout_ms` until `count` requests are held, then takes them; none on timeout.
  std::vector<Held> Take(size_t count, int timeout_ms = net::testing::kWaitMs) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, count]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return held_.size() >= count; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Milliseconds(timeout_ms))) return {};
    std::vector<Held> out;
    for (size_t i = 0; i < count; ++i) {
      out.push_back(std::move(held_.front()));
      held_.pop_front();
    }
    return out;
  }

  bool WaitForCancels(int count) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancels_ >= count; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough),
                                absl::Milliseconds(net::testing::kWaitMs));
  }

 private:
  absl::Mutex mu_;
  std::deque<Held> held_ ABSL_GUARDED_BY(mu_);
  int cancels_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace brigade::frontend::testing

#endif  // BRIGADE_FRONTEND_HTTP_TEST_HANDLERS_H_
