"""The differential conformance suite: the same cases, with real gRPC
clients (grpcio and @grpc/grpc-js) and with raw HTTP/2 where a client
cannot send what a case needs, against both fronts of --listen: the loop
front (--listen_front=loop, the default) and the gRPC library's server
(--listen_front=grpc, the reference).

CASES below is the table: each row is a call and the outcome the protocol
(gRPC over HTTP/2, grpc/doc/PROTOCOL-HTTP2.md) wants of it. Every case is
run by each client against each front; the observed outcome (status code,
whether there is a message, the names of custom initial and trailing
metadata, the decoded answers) must be the same on both fronts and must be
the row's. Where the fronts are known to differ, the row's `differs` says
how and which side the protocol text supports, and the test asserts that
the loop front does the right thing (the reference's outcome is then only
recorded in the test log).

RAW_CASES are raw HTTP/2 (python-h2), for what clients always send one
way (content-types, a compressed message); a keepalive ping policy (gRFC
A8) is checked with raw PINGs too. The SIGTERM case (a health Watch open
when the sidecar is stopped) has its own sidecars. README.md sums up the
table and the differences found.
"""

import base64
import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import grpc
import h2.events

from client.testing.sidecar_harness import Replica, Sidecar
from proto.tailgate.v1 import tailgate_pb2
from tests.conformance import python_caller
from tests.hostile import raw_h2

NODE_CALLER = "tests/conformance/node_caller.js"  # runfiles path
NODE_MODULES = os.environ.get("TAILGATE_NODE_MODULES",
                              "/opt/tailgate/npm/node_modules")
FRONTS = ("loop", "grpc")
CLIENTS = ("python", "node")

READ = "/tailgate.v1.HedgedRead/Read"
CHECK = "/grpc.health.v1.Health/Check"
WATCH = "/grpc.health.v1.Health/Watch"
REFLECT = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"

SIDECAR_FLAGS = ["--timeout=10s", "--drain_timeout=1s",
                 "--hedge_delay=1s"]  # one attempt per read here
BIG_ANSWER = 3 * 1024 * 1024
# Both fronts take request metadata up to 16 KiB (the library's default
# hard limit, and --listen's): one value just under, and one over.
LARGE_METADATA = 15 * 1024
OVERSIZE_METADATA = 17 * 1024


def read(path, upstream="", headers=()):
    return tailgate_pb2.ReadRequest(
        path=path, upstream=upstream,
        headers=[tailgate_pb2.Header(name=n, value=v)
                 for n, v in headers]).SerializeToString()


def health(service):
    """A HealthCheckRequest: field 1, the service name."""
    name = service.encode()
    return (b"\x0a" + bytes([len(name)]) + name) if name else b""


# What each kind of answer decodes to, for comparison.
def read_answer(data):
    response = tailgate_pb2.ReadResponse.FromString(data)
    body = response.body
    return "%d %s" % (response.status, body.decode() if len(body) < 100
                      else "<%d bytes>" % len(body))


_HEALTH = {b"": "UNKNOWN", b"\x08\x01": "SERVING", b"\x08\x02": "NOT_SERVING",
           b"\x08\x03": "SERVICE_UNKNOWN"}


def health_answer(data):
    return _HEALTH.get(data, "unparsed")


def reflection_answer(data):
    """The service names a list_services answer holds, sorted."""
    return ",".join(sorted(set(
        name.decode() for name in
        re.findall(rb"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*\.[A-Z]\w*", data))))


def case(method, request, expect, kind="unary", decode=read_answer,
         differs=None, **call):
    """One row: the call, and `expect`: {code, message: bool, answers,
    initial: [names], trailing: [names]} (names of custom metadata), what
    the loop front must give. `differs`: {field: why} for the fields in
    which the reference (the gRPC library) is known to give something else
    (always, or on some runs); every other field must be the same on both
    fronts."""
    spec = dict(method=method, request=request, kind=kind, **call)
    expect = dict(dict(message=expect["code"] != "OK", answers=[],
                       initial=[], trailing=[]), **expect)
    return dict(spec=spec, expect=expect, decode=decode, differs=differs)


# The table. Each row: name -> the call and the outcome both fronts must
# give, with either client.
CASES = {
    "unary_read_ok": case(
        READ, read("/plain"),
        dict(code="OK", answers=["200 fast:/plain"])),
    # A Host header in the read: the sidecar refuses it.
    "bad_request": case(
        READ, read("/x", headers=[("Host", "elsewhere")]),
        dict(code="INVALID_ARGUMENT")),
    # Bytes that are no ReadRequest.
    "unparsable_request": case(
        READ, b"\xff", dict(code="INVALID_ARGUMENT"), differs=dict(
            code="the library answers UNIMPLEMENTED, which says the method "
                 "does not exist; grpc/doc/statuscodes.md has the library "
                 "answer INTERNAL for 'error parsing request proto', and "
                 "INVALID_ARGUMENT is the application's code for a request "
                 "it cannot take: the loop front is right",
            message="the library gives no message")),
    "unknown_upstream": case(
        READ, read("/x", upstream="nowhere"), dict(code="NOT_FOUND")),
    # The replica answers /stall after 3 s; the deadline is 200 ms.
    "deadline_exceeded": case(
        READ, read("/stall"), dict(code="DEADLINE_EXCEEDED"),
        timeout_ms=200),
    # Values are printable ASCII 0x20-0x7E, spaces at either end included
    # (PROTOCOL-HTTP2.md, ASCII-Value).
    "metadata_with_spaces": case(
        READ, read("/plain"), dict(code="OK", answers=["200 fast:/plain"]),
        metadata=[("x-token", "abc "), ("x-other", " leading"),
                  ("x-inner", "a b")]),
    # Binary-Header: any bytes, base64 on the wire.
    "binary_metadata": case(
        READ, read("/plain"), dict(code="OK", answers=["200 fast:/plain"]),
        metadata=[("x-blob-bin", b"\x00\xff\x80\n")]),
    "large_metadata": case(
        READ, read("/plain"), dict(code="OK", answers=["200 fast:/plain"]),
        metadata=[("x-large", "a" * LARGE_METADATA)]),
    # Over the limit: the call is refused; the connection must go on
    # serving (the next row runs on the same channel, right after it).
    "metadata_over_limit": case(
        READ, read("/plain"), dict(code="RESOURCE_EXHAUSTED"),
        metadata=[("x-large", "a" * OVERSIZE_METADATA)]),
    "read_after_metadata_over_limit": case(
        READ, read("/plain"), dict(code="OK", answers=["200 fast:/plain"]),
        differs=dict.fromkeys(
            ("code", "message", "answers"),
            "the library refuses the call and then drops the connection, "
            "so a call sent on it next fails UNAVAILABLE ('Socket closed', "
            "'Connection dropped'; not every time: a call that starts after "
            "the client saw the close goes to a new connection). RFC 9113 "
            "10.5.1 lets a server refuse an oversized header block as a "
            "stream error and keep the connection; the loop front does, and "
            "is right")),
    "big_answer": case(
        READ, read("/bytes/%d" % BIG_ANSWER),
        dict(code="OK", answers=["200 <%d bytes>" % BIG_ANSWER])),
    # The client compresses its request with gzip (grpc-encoding: gzip).
    # Neither front accepts compressed requests (the library's server is
    # set up with identity only): "a message compressed by an algorithm
    # that is not supported by a server ... will result in an UNIMPLEMENTED
    # error status" (PROTOCOL-HTTP2.md). The grpc-accept-encoding the
    # answer must carry is checked in RAW_CASES (clients hide it).
    "gzip_request": case(
        READ, read("/plain"), dict(code="UNIMPLEMENTED"),
        compression="gzip"),
    # The protocol fixes no message for an unknown method: the loop front
    # names the method, the library says nothing.
    "unknown_method": case(
        "/tailgate.v1.Nope/Nothing", b"", dict(code="UNIMPLEMENTED"),
        differs=dict(message="the library gives no message; none is "
                             "required")),
    # Admin is served on --admin only.
    "admin_not_on_listen": case(
        "/tailgate.v1.Admin/GetStats", b"", dict(code="UNIMPLEMENTED"),
        differs=dict(message="as unknown_method")),
    "health_check": case(
        CHECK, health(""), dict(code="OK", answers=["SERVING"]),
        decode=health_answer),
    "health_check_unknown_service": case(
        CHECK, health("no.such.Service"), dict(code="NOT_FOUND"),
        decode=health_answer),
    # The first answer of a Watch, then the client cancels it.
    "health_watch": case(
        WATCH, health(""),
        dict(code="CANCELLED", answers=["SERVING"]), kind="stream",
        reads=1, decode=health_answer),
    "reflection_list_services": case(
        REFLECT, b"\x3a\x00",  # list_services: ""
        dict(code="OK", answers=[
            "grpc.health.v1.Health,grpc.reflection.v1.ServerReflection,"
            "grpc.reflection.v1alpha.ServerReflection,"
            "tailgate.v1.HedgedRead"]),
        kind="bidi", decode=reflection_answer),
    # The client cancels a read the replica holds for 3 s; the sidecar
    # counts it as cancelled (checked from Admin.GetStats).
    "cancellation": case(
        READ, read("/stall"), dict(code="CANCELLED"), cancel_ms=300),
}

# Raw HTTP/2 Reads of /plain, for what clients always send one way. Each
# row: the request's content-type (None: none sent) and extra headers, its
# message (compressed or not), and what the loop front must answer:
# `status` the HTTP :status; `grpc_status` (only for 200); and, where the
# row names it, `accept_encoding`: whether grpc-accept-encoding is sent
# (optional on other answers). `differs` as in CASES.
#
# PROTOCOL-HTTP2.md: Content-Type is "application/grpc" [("+proto" /
# "+json" / {custom})], and media types are case-insensitive (RFC 9110
# 8.3.1); "if Content-Type does not begin with application/grpc, gRPC
# servers SHOULD respond with HTTP status of 415 (Unsupported Media Type)".
def raw(content_type="application/grpc", expect=None, headers=(),
        compressed=False, differs=None):
    return dict(content_type=content_type, headers=list(headers),
                compressed=compressed, differs=differs,
                expect=dict(dict(status="200", grpc_status="0"),
                            **(expect or {})))


_NOT_415 = ("the library serves the call (200, grpc-status 0): the protocol "
            "text says a server SHOULD answer 415, so that an HTTP client "
            "does not take a gRPC error for success: the loop front is "
            "right")

RAW_CASES = {
    "content_type_grpc": raw(),
    "content_type_grpc_proto": raw("application/grpc+proto"),
    "content_type_upper_case": raw("Application/GRPC"),
    "content_type_mixed_case_proto": raw("application/GRPC+proto"),
    "content_type_text_plain": raw(
        "text/plain", dict(status="415", grpc_status=None),
        differs=dict(status=_NOT_415, grpc_status=_NOT_415)),
    "content_type_missing": raw(
        None, dict(status="415", grpc_status=None),
        differs=dict(status=_NOT_415, grpc_status=_NOT_415)),
    # A gzip-compressed message: UNIMPLEMENTED, and grpc-accept-encoding
    # says what the server takes (PROTOCOL-HTTP2.md, Compression).
    "gzip_message": raw(
        expect=dict(grpc_status="12", accept_encoding=True),
        headers=[("grpc-encoding", "gzip")], compressed=True,
        differs=dict(accept_encoding=(
            "the library answers UNIMPLEMENTED without grpc-accept-encoding "
            "(it sends one on its OK answers); the protocol text says the "
            "server will include it: the loop front is right"))),
}


def node_outcomes(target, specs):
    """Runs `specs` ({name: spec}) with node_caller.js: {name: outcome}."""
    def encoded(value):
        return ({"b64": base64.b64encode(value).decode()}
                if isinstance(value, bytes) else value)
    calls = {name: {key: ([[k, encoded(v)] for k, v in value]
                          if key == "metadata" else encoded(value))
                    for key, value in spec.items()}
             for name, spec in specs.items()}
    directory = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
    path = os.path.join(directory, "calls.json")
    with open(path, "w") as out:
        json.dump(calls, out)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": directory, "NODE_PATH": NODE_MODULES}
    node = shutil.which("node", path=env["PATH"]) or "/usr/bin/node"
    result = subprocess.run([node, NODE_CALLER, target, path], env=env,
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError("node_caller.js failed:\n" + result.stderr)

    def decoded(value):
        return (base64.b64decode(value["b64"]) if isinstance(value, dict)
                else value)
    outcomes = json.loads(result.stdout)
    for outcome in outcomes.values():
        outcome["answers"] = [decoded(a) for a in outcome["answers"]]
    return outcomes


# Metadata every call carries, or that one client adds: not compared.
_STANDARD_METADATA = re.compile(
    r"^(content-type|grpc-accept-encoding|grpc-encoding|accept-encoding|"
    r"user-agent|date|server|grpc-status|grpc-message|content-length|"
    r"grpc-status-details-bin|:.*)$")


def observed(row, outcome):
    """What is compared of an outcome."""
    def names(pairs):
        return sorted({key for key, _ in pairs
                       if not _STANDARD_METADATA.match(key)})
    return dict(code=outcome["code"], message=bool(outcome["message"]),
                answers=[row["decode"](a) for a in outcome["answers"]],
                initial=names(outcome["initial"]),
                trailing=names(outcome["trailing"]))


def stats(sidecar):
    with grpc.insecure_channel(sidecar.admin) as channel:
        answer = channel.unary_unary("/tailgate.v1.Admin/GetStats")(
            b"", timeout=10)
    return tailgate_pb2.GetStatsResponse.FromString(answer)


class DifferentialConformanceTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.replica = Replica("fast")
        cls.sidecars = {}
        cls.outcomes = {}   # (client, front) -> {case: outcome}
        cls.cancelled = {}  # front -> reads the sidecar counted cancelled
        try:
            for front in FRONTS:
                cls.sidecars[front] = Sidecar(
                    [cls.replica.url],
                    SIDECAR_FLAGS + ["--listen_front=" + front])
            # Each client runs the rows in order, on one channel.
            specs = {name: row["spec"] for name, row in CASES.items()}
            for front, sidecar in cls.sidecars.items():
                before = stats(sidecar).cancelled
                cls.outcomes["python", front] = python_caller.run(
                    sidecar.target, specs)
                cls.outcomes["node", front] = node_outcomes(sidecar.target,
                                                            specs)
                cls.cancelled[front] = cls.wait_for_cancels(
                    sidecar, before + len(CLIENTS)) - before
        except Exception:
            cls.tearDownClass()
            raise

    @staticmethod
    def wait_for_cancels(sidecar, want):
        """The sidecar's `cancelled` count once it reaches `want`, or what
        it is after 5 s."""
        deadline = time.monotonic() + 5
        while True:
            count = stats(sidecar).cancelled
            if count >= want or time.monotonic() > deadline:
                return count
            time.sleep(0.02)

    @classmethod
    def tearDownClass(cls):
        for sidecar in cls.sidecars.values():
            sidecar.close()
        cls.replica.close()

    def test_every_case_as_the_table_says_on_both_fronts(self):
        for name, row in CASES.items():
            for client in CLIENTS:
                seen = {front: observed(row, self.outcomes[client, front][name])
                        for front in FRONTS}
                print("%-30s %-6s loop=%s grpc=%s" % (
                    name, client, seen["loop"], seen["grpc"]))
                with self.subTest(case=name, client=client):
                    self.assert_conforms(seen, row)

    def assert_conforms(self, seen, row):
        """The loop front gives the row's outcome; the reference the same
        but for the fields the row says it differs in."""
        self.assertEqual(seen["loop"], row["expect"])
        differs = row["differs"] or {}
        same = {field for field in row["expect"] if field not in differs}
        self.assertEqual({f: seen["grpc"][f] for f in same},
                         {f: seen["loop"][f] for f in same})

    def test_a_cancelled_read_is_counted_by_the_sidecar(self):
        # "cancellation" by each of the two clients; the deadline case is a
        # timeout, not a cancel.
        self.assertEqual(self.cancelled, {front: len(CLIENTS)
                                          for front in FRONTS})

    def test_raw_cases_as_the_table_says_on_both_fronts(self):
        for name, row in RAW_CASES.items():
            seen = {}
            for front in FRONTS:
                answer = self.raw_read(front, row)
                seen[front] = {field: answer[field] for field in row["expect"]}
            print("%-30s raw    loop=%s grpc=%s" % (name, seen["loop"],
                                                     seen["grpc"]))
            with self.subTest(case=name):
                self.assert_conforms(seen, row)

    def raw_read(self, front, row):
        """What a raw Read of /plain, as `row` says, was answered."""
        connection = raw_h2.Connection(self.sidecars[front].target)
        try:
            headers = [(b":method", b"POST"), (b":scheme", b"http"),
                       (b":path", READ.encode()),
                       (b":authority", b"sidecar"), (b"te", b"trailers")]
            if row["content_type"] is not None:
                headers.append((b"content-type", row["content_type"].encode()))
            headers += [(k.encode(), v.encode()) for k, v in row["headers"]]
            stream = connection.h2.get_next_available_stream_id()
            connection.h2.send_headers(stream, headers)
            connection.responses[stream] = {"headers": None, "data": b"",
                                            "trailers": None, "reset": None}
            message = read("/plain")
            if row["compressed"]:
                message = gzip.compress(message)
            connection.send(stream, raw_h2.grpc_frame(
                message, compressed=row["compressed"]), end=True)
            connection.finish(stream)
            response = connection.responses[stream]
        finally:
            connection.sock.close()
        headers = response["headers"] or {}
        trailers = response["trailers"] or headers
        status = headers.get(b":status", b"").decode() or None
        grpc_status = trailers.get(b"grpc-status")
        return dict(
            status=status,
            grpc_status=(grpc_status.decode() if grpc_status is not None and
                         status == "200" else None),
            accept_encoding=(b"grpc-accept-encoding" in headers or
                             b"grpc-accept-encoding" in trailers))

    def test_keepalive_pings_without_calls_end_in_too_many_pings(self):
        # gRFC A8: a server that receives pings more often than it permits
        # (by default, without calls, not more than one every 5 minutes)
        # answers GOAWAY ENHANCE_YOUR_CALM with "too_many_pings" after a
        # few. Each ping is sent once the last one was acknowledged.
        for front in FRONTS:
            with self.subTest(front=front):
                acks, goaway = self.ping_until_goaway(front, pings=10)
                print("keepalive_pings_without_calls  raw    %s: %d acks, "
                      "then %s" % (front, acks, goaway))
                self.assertIsNotNone(goaway, "%d pings acknowledged" % acks)
                self.assertEqual(goaway.error_code, 11)  # ENHANCE_YOUR_CALM
                self.assertIn(b"too_many_pings", goaway.additional_data or b"")
                self.assertLess(acks, 10)

    def ping_until_goaway(self, front, pings):
        connection = raw_h2.Connection(self.sidecars[front].target)
        acks, goaway = 0, None
        try:
            for n in range(pings):
                connection.h2.ping(b"%08d" % n)
                connection.flush()
                acked = False
                while not acked and goaway is None:
                    try:
                        data = connection.sock.recv(65536)
                    except (socket.timeout, OSError):
                        data = b""
                    if not data:
                        return acks, goaway
                    for event in connection.h2.receive_data(data):
                        if isinstance(event, h2.events.PingAckReceived):
                            acked = True
                            acks += 1
                        elif isinstance(event, h2.events.ConnectionTerminated):
                            goaway = event
                if goaway is not None:
                    return acks, goaway
        finally:
            connection.sock.close()
        return acks, goaway


class SigtermWithWatchOpenTest(unittest.TestCase):
    """SIGTERM while a health Watch is open: the stream must end with a
    status from the server (the gRPC library sends UNAVAILABLE), not with
    the connection dropped under it."""

    def test_watch_ends_with_a_status(self):
        outcomes = {}
        with Replica("fast") as replica:
            for front in FRONTS:
                sidecar = Sidecar([replica.url],
                                  SIDECAR_FLAGS + ["--listen_front=" + front])
                try:
                    outcomes[front] = self.watch_through_sigterm(sidecar)
                finally:
                    sidecar.close()
        print("sigterm_with_watch_open", outcomes)
        for front in FRONTS:
            outcomes[front]["message"] = bool(outcomes[front]["message"])
        self.assertEqual(outcomes["loop"], outcomes["grpc"])
        # The Watch says NOT_SERVING as the drain starts, then ends.
        self.assertEqual(outcomes["loop"], dict(
            code="UNAVAILABLE", answers=["SERVING", "NOT_SERVING"],
            message=True))

    def watch_through_sigterm(self, sidecar):
        answers = []
        with grpc.insecure_channel(sidecar.target) as channel:
            stream = channel.unary_stream(WATCH)(health(""), timeout=20)
            try:
                for answer in stream:
                    answers.append(health_answer(answer))
                    if len(answers) == 1:
                        sidecar.process.terminate()
            except grpc.RpcError:
                pass
            return dict(code=stream.code().name, answers=answers,
                        message=stream.details())


if __name__ == "__main__":
    unittest.main()
