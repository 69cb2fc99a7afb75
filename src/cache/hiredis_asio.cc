#include "cache/hiredis_asio.h"

#include <memory>
#include <utility>

#include "boost/asio/posix/stream_descriptor.hpp"
#include "core/strings.h"
#include "hiredis/async.h"

namespace brigade::cache {
namespace {

namespace asio = boost::asio;

// One per attached context. Waits are non-speculative, so Asio re-arms the descriptor in epoll
// for each wait (EPOLL_CTL_MOD), which reports data or buffer space that is already there: a
// reply larger than hiredis's 16 KiB read chunk is read over several wake-ups, never stuck.
class Adapter : public std::enable_shared_from_this<Adapter> {
 public:
  Adapter(asio::io_context& io, redisAsyncContext* context, std::function<void()> on_cleanup)
      : context_(context), socket_(io), on_cleanup_(std::move(on_cleanup)) {}

  absl::Status Attach() {
    boost::system::error_code ec;
    socket_.assign(context_->c.fd, ec);
    if (ec) return absl::InternalError(StrCat("redis: cannot watch socket: ", ec.message()));
    self_ = shared_from_this();
    context_->ev.data = this;
    context_->ev.addRead = &Adapter::AddRead;
    context_->ev.delRead = &Adapter::DelRead;
    context_->ev.addWrite = &Adapter::AddWrite;
    context_->ev.delWrite = &Adapter::DelWrite;
    context_->ev.cleanup = &Adapter::Cleanup;
    // The connect completes on the first writable event (hiredis checks the socket error then).
    AddWrite(this);
    return absl::OkStatus();
  }

 private:
  static Adapter* From(void* data) { return static_cast<Adapter*>(data); }

  static void AddRead(void* data) {
    Adapter* self = From(data);
    self->want_read_ = true;
    self->ArmRead();
  }
  static void DelRead(void* data) { From(data)->want_read_ = false; }
  static void AddWrite(void* data) {
    Adapter* self = From(data);
    self->want_write_ = true;
    self->ArmWrite();
  }
  static void DelWrite(void* data) { From(data)->want_write_ = false; }

  static void Cleanup(void* data) {
    Adapter* self = From(data);
    std::shared_ptr<Adapter> keep = std::move(self->self_);
    self->closed_ = true;
    self->context_ = nullptr;
    // Stops watching (queued waits finish with operation_aborted) and keeps the descriptor open:
    // hiredis closes it right after this hook.
    self->socket_.release();
    if (self->on_cleanup_) self->on_cleanup_();
  }

  void ArmRead() {
    if (read_armed_ || closed_) return;
    read_armed_ = true;
    socket_.async_wait(asio::posix::descriptor_base::wait_read,
                       [self = shared_from_this()](const boost::system::error_code& ec) {
                         self->read_armed_ = false;
                         if (ec || self->closed_ || !self->want_read_) return;
                         redisAsyncHandleRead(self->context_);  // may free the context
                         if (!self->closed_ && self->want_read_) self->ArmRead();
                       });
  }

  void ArmWrite() {
    if (write_armed_ || closed_) return;
    write_armed_ = true;
    socket_.async_wait(asio::posix::descriptor_base::wait_write,
                       [self = shared_from_this()](const boost::system::error_code& ec) {
                         self->write_armed_ = false;
                         if (ec || self->closed_ || !self->want_write_) return;
                         redisAsyncHandleWrite(self->context_);  // may free the context
                         if (!self->closed_ && self->want_write_) self->ArmWrite();
                       });
  }

  redisAsyncContext* context_;
  asio::posix::stream_descriptor socket_;
  std::function<void()> on_cleanup_;
  // hiredis holds a raw pointer (ev.data); this self-reference keeps the adapter alive until
  // hiredis says goodbye through Cleanup().
  std::shared_ptr<Adapter> self_;
  bool want_read_ = false;
  bool want_write_ = false;
  bool read_armed_ = false;
  bool write_armed_ = false;
  bool closed_ = false;
};

}  // namespace

absl::Status AttachToAsio(asio::io_context& io, redisAsyncContext* context,
                          std::function<void()> on_cleanup) {
  if (context == nullptr || context->ev.data != nullptr) {
    return absl::InternalError("redis: context is null or already attached");
  }
  auto adapter = std::make_shared<Adapter>(io, context, std::move(on_cleanup));
  return adapter->Attach();
}

}  // namespace brigade::cache
