#ifndef BRIGADE_CACHE_HIREDIS_ASIO_H_
#define BRIGADE_CACHE_HIREDIS_ASIO_H_

// Runs a hiredis asynchronous connection (redisAsyncContext) on a Boost.Asio io_context.
// hiredis 0.14 ships adapters for libevent, libev, libuv and others, but none for Asio; this is
// that adapter. hiredis says when it wants to read or write (addRead/delRead/addWrite/delWrite);
// the adapter turns each wish into an async_wait on the socket and calls
// redisAsyncHandleRead/Write when the socket is ready, re-arming while the wish lasts.
//
// Lifetime: the adapter lives from AttachToAsio() until hiredis frees the context (its
// `cleanup` hook), which happens on any disconnect, failed connect or redisAsyncFree(). At that
// point the adapter stops watching the socket and gives the descriptor back without closing it
// (hiredis closes it). Waits still queued in Asio keep the adapter alive and then do nothing.
//
// Threading: the context and the adapter must only be used from the thread running `io`.
// Failure: INTERNAL when the context already has an adapter or Asio refuses the descriptor.

#include <functional>

#include "absl/status/status.h"
#include "boost/asio/io_context.hpp"

struct redisAsyncContext;

namespace brigade::cache {

// `on_cleanup`, if set, runs when hiredis frees the context (after pending callbacks ran); the
// context must not be used from then on.
absl::Status AttachToAsio(boost::asio::io_context& io, redisAsyncContext* context,
                          std::function<void()> on_cleanup);

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_HIREDIS_ASIO_H_
