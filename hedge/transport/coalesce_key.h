// CoalesceKey: which reads of a coalescing upstream (UpstreamConfig::
// coalesce) may share one upstream fetch. Two reads in flight at once on
// the same upstream share a fetch exactly when their keys are equal.
//
// The key holds, each length-prefixed so that no two different reads can
// collide:
//  - the method (GET or HEAD) and the request target, byte for byte (the
//    target is never normalised: "/a?x=1&y=2" and "/a?y=2&x=1" differ);
//  - every request header the replica would see, in the order given,
//    duplicates kept: its name lowercased (HTTP names are
//    case-insensitive) and its value byte for byte. So reads carrying
//    credentials (Authorization, Cookie, or any other header) share only
//    with reads carrying the very same values; the same headers in a
//    different order do not share (a missed share, never a wrong one);
//  - the read's own hedge options (hedge disabled, its own hedge delay),
//    since the fetch's hedge is the one its first caller asked for.
// The tenant is not in the key: reads of different tenants with the same
// request share the fetch (each is admitted under its own tenant).
//
// Thread safety: a pure function; safe from any thread.

#ifndef TAILGATE_HEDGE_TRANSPORT_COALESCE_KEY_H_
#define TAILGATE_HEDGE_TRANSPORT_COALESCE_KEY_H_

#include <string>

#include "hedge/transport/engine.h"

namespace tailgate::hedge::transport {

std::string CoalesceKey(const EngineRead& read);

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_COALESCE_KEY_H_
