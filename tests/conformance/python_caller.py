"""Runs one call of the conformance table with grpcio (Debian's
python3-grpcio), on bytes: the table serializes requests and decodes
answers itself, so this client and node_caller.js run exactly the same
call. A call is a dict:

  method       "/package.Service/Method"
  kind         "unary"; "stream" (one request, answers streamed); "bidi"
               (one request, then half-close, answers streamed)
  request      bytes
  metadata     [(key, str or bytes)]; bytes for keys ending in -bin
  timeout_ms   the call's deadline, or None
  compression  "gzip" to compress the request, or None
  cancel_ms    cancel the call this long after it started, or None
  reads        cancel a streamed call after this many answers, or None to
               read them all

and its outcome a dict: code (a grpc.StatusCode name), message, answers
(a list of bytes), initial and trailing (lists of (key, value))."""

import threading

import grpc

_STATUS_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}


def _metadata(pairs):
    return [(key, value) for key, value in (pairs or [])] or None


def _pairs(metadata):
    return [(item.key, item.value) for item in (metadata or ())]


def call(channel, spec):
    compression = (grpc.Compression.Gzip if spec.get("compression") == "gzip"
                   else None)
    timeout = (spec["timeout_ms"] / 1000.0 if spec.get("timeout_ms")
               else 30.0)
    metadata = _metadata(spec.get("metadata"))
    answers = []
    if spec.get("kind", "unary") == "unary":
        callable_ = channel.unary_unary(spec["method"])
        future = callable_.future(spec["request"], timeout=timeout,
                                  metadata=metadata, compression=compression)
        if spec.get("cancel_ms"):
            timer = threading.Timer(spec["cancel_ms"] / 1000.0, future.cancel)
            timer.start()
        try:
            answers.append(future.result())
        except (grpc.RpcError, grpc.FutureCancelledError):
            pass
        return {"code": future.code().name, "message": future.details() or "",
                "answers": answers,
                "initial": _pairs(future.initial_metadata()),
                "trailing": _pairs(future.trailing_metadata())}
    if spec["kind"] == "bidi":
        callable_ = channel.stream_stream(spec["method"])
        stream = callable_(iter([spec["request"]]), timeout=timeout,
                           metadata=metadata, compression=compression)
    else:
        callable_ = channel.unary_stream(spec["method"])
        stream = callable_(spec["request"], timeout=timeout,
                           metadata=metadata, compression=compression)
    try:
        for answer in stream:
            answers.append(answer)
            if spec.get("reads") and len(answers) >= spec["reads"]:
                stream.cancel()
                break
    except grpc.RpcError:
        pass
    return {"code": stream.code().name, "message": stream.details() or "",
            "answers": answers, "initial": _pairs(stream.initial_metadata()),
            "trailing": _pairs(stream.trailing_metadata())}


def run(target, specs):
    """Runs each call of {name: spec} on one channel to `target`:
    {name: outcome}."""
    outcomes = {}
    with grpc.insecure_channel(target) as channel:
        for name, spec in specs.items():
            outcomes[name] = call(channel, spec)
    return outcomes
