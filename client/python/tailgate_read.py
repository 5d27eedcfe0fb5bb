#!/usr/bin/env python3
"""Reads one path through the Tailgate sidecar and prints the body, or
many paths as one batch (HedgedRead.ReadMany) and a line per read.

An example of calling Tailgate from Python with stubs generated from
proto/tailgate/v1/tailgate.proto (see client/README.md for generating them
with Bazel or a plain protoc command):

    python3 tailgate_read.py --target=127.0.0.1:8080 -v /users/42

The body goes to stdout byte for byte; -v prints the HTTP status, headers and
the sidecar's trace to stderr.

    python3 tailgate_read.py --target=127.0.0.1:8080 --many /a /b /c
    python3 tailgate_read.py --many < paths.txt

--many reads the paths (from stdin, one a line, when none is given) as one
ReadMany call and prints a line per read as it completes, as the C++
`tailgate_read many` does: "INDEX HTTP_STATUS BYTES PATH" for an answer,
"INDEX CODE - PATH MESSAGE" for a read that failed on its own. Its exit
code is the call's when the call fails, else that of the failed read of
lowest INDEX; 0 when every read got an HTTP status below 400. Exit codes are those of the C++
tailgate_read: 0 for HTTP < 400, 4 / 5 for HTTP 4xx / 5xx, 2 for a usage
error, 12 when the sidecar refuses the read (RESOURCE_EXHAUSTED: admission
full or the response over its --max_response_bytes), 14 when the deadline
passes (DEADLINE_EXCEEDED), and the rest of the table in client/README.md.
"""

import argparse
import re
import sys

import grpc
from google.protobuf import duration_pb2

from proto.tailgate.v1 import tailgate_pb2
from proto.tailgate.v1 import tailgate_pb2_grpc

EXIT_OK = 0
EXIT_OTHER_ERROR = 1
EXIT_USAGE = 2  # argparse's own exit code for bad arguments
EXIT_OUTPUT_ERROR = 3
EXIT_HTTP_4XX = 4
EXIT_HTTP_5XX = 5
EXIT_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT: 10,
    grpc.StatusCode.NOT_FOUND: 11,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 12,
    grpc.StatusCode.UNAVAILABLE: 13,
    grpc.StatusCode.DEADLINE_EXCEEDED: 14,
    grpc.StatusCode.CANCELLED: 15,
}

# gRPC's default limit (4 MiB) is below the sidecar's default
# --max_response_bytes plus headers; this covers its 64 MiB hard cap.
MAX_RECEIVE_MESSAGE_BYTES = 80 << 20

_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)(ns|us|ms|s|m|h)$")


def duration_seconds(text):
    """'250ms' -> 0.25; positive durations with a unit, as the C++ CLI."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(
            "not a positive duration: %r (use 250ms, 1.5s, 2m)" % text)
    return float(match.group(1)) * _UNITS[match.group(2)]


def header(text):
    """'Name: value' -> tailgate_pb2.Header."""
    name, colon, value = text.partition(":")
    if not colon or not name or any(c.isspace() for c in name):
        raise argparse.ArgumentTypeError(
            "expected 'Name: value', got %r" % text)
    return tailgate_pb2.Header(name=name, value=value.strip())


def origin_form_path(text):
    if not text.startswith("/"):
        raise argparse.ArgumentTypeError(
            "PATH must start with '/' (e.g. /index.html?q=1), got %r" % text)
    return text


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="tailgate_read.py",
        description="Read PATH through the Tailgate sidecar; the body goes "
        "to stdout.",
        epilog="Exit codes: 0 HTTP < 400, 1 other gRPC error, 2 usage, "
        "3 output error, 4 HTTP 4xx, 5 HTTP 5xx, 10 INVALID_ARGUMENT, "
        "11 NOT_FOUND, 12 RESOURCE_EXHAUSTED, 13 UNAVAILABLE, "
        "14 DEADLINE_EXCEEDED, 15 CANCELLED.")
    parser.add_argument("--target", default="127.0.0.1:8080",
                        help="the sidecar: host:port or unix:/path "
                        "(default %(default)s)")
    parser.add_argument("--head", action="store_true",
                        help="HEAD instead of GET")
    parser.add_argument("-H", "--header", type=header, action="append",
                        default=[], dest="headers", metavar="'NAME: VALUE'",
                        help="add a request header (repeatable)")
    parser.add_argument("--upstream", default="",
                        help="replica set (default: the sidecar's --backends)")
    parser.add_argument("--deadline", type=duration_seconds, default=5.0,
                        metavar="DUR", help="deadline of the call (default 5s)")
    hedge = parser.add_mutually_exclusive_group()
    hedge.add_argument("--no-hedge", "--no_hedge", action="store_true",
                       dest="no_hedge", help="no speculative hedge")
    hedge.add_argument("--hedge-delay", "--hedge_delay", type=duration_seconds,
                       dest="hedge_delay", metavar="DUR",
                       help="hedge after DUR instead of the sidecar's delay")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="status, headers and trace to stderr")
    parser.add_argument("--many", action="store_true",
                        help="read every PATH (stdin, one a line, if none) "
                        "as one batch; a line per read")
    parser.add_argument("--max-in-flight", "--max_in_flight", type=int,
                        default=0, dest="max_in_flight", metavar="N",
                        help="--many: reads the sidecar runs at once "
                        "(default: as admission allows)")
    parser.add_argument("paths", type=origin_form_path, metavar="PATH",
                        nargs="*",
                        help="origin-form path, e.g. /users/42?fields=name")
    args = parser.parse_args(argv)
    if not args.many and len(args.paths) != 1:
        parser.error("want one PATH (or --many)")
    args.path = args.paths[0] if args.paths else ""
    return args


def build_request(args, path=None):
    request = tailgate_pb2.ReadRequest(
        path=args.path if path is None else path,
        method=tailgate_pb2.METHOD_HEAD if args.head else tailgate_pb2.METHOD_GET,
        headers=args.headers,
        upstream=args.upstream)
    if args.no_hedge:
        request.hedge.disable = True
    if args.hedge_delay is not None:
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(round(args.hedge_delay * 1e9))
        request.hedge.delay.CopyFrom(delay)
    return request


def http_exit_code(status):
    if status >= 500:
        return EXIT_HTTP_5XX
    if status >= 400:
        return EXIT_HTTP_4XX
    return EXIT_OK


def describe_error(error, args):
    """One line for a failed call, worded for the two refusals an
    application should plan for."""
    code, details = error.code(), error.details()
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return ("the sidecar refused the read (RESOURCE_EXHAUSTED: %s); it is "
                "at its admission limit or the response is over its "
                "--max_response_bytes: back off, or read less" % details)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ("no answer within %gs (DEADLINE_EXCEEDED: %s); raise "
                "--deadline if the replicas are slow" % (args.deadline, details))
    return "%s: %s" % (code.name, details)


def print_trace(response, err):
    err.write("< HTTP %d\n" % response.status)
    for h in response.headers:
        err.write("< %s: %s\n" % (h.name, h.value))
    trace = response.trace
    err.write("* trace attempts=%d hedged=%s hedge_won=%s replica=%s "
              "latency=%.3fms\n" % (
                  trace.attempts, str(trace.hedged).lower(),
                  str(trace.hedge_won).lower(), trace.replica,
                  trace.latency.ToNanoseconds() / 1e6))


def read(args, out, err):
    """Performs the read; returns the exit code."""
    options = [("grpc.max_receive_message_length", MAX_RECEIVE_MESSAGE_BYTES)]
    with grpc.insecure_channel(args.target, options=options) as channel:
        stub = tailgate_pb2_grpc.HedgedReadStub(channel)
        try:
            response = stub.Read(build_request(args), timeout=args.deadline)
        except grpc.RpcError as error:
            err.write("tailgate_read.py: %s\n" % describe_error(error, args))
            return EXIT_CODES.get(error.code(), EXIT_OTHER_ERROR)
    if args.verbose:
        print_trace(response, err)
    try:
        out.write(response.body)
        out.flush()
    except OSError as error:
        err.write("tailgate_read.py: cannot write to stdout: %s\n" % error)
        return EXIT_OUTPUT_ERROR
    return http_exit_code(response.status)


def item_line(item, path):
    """The line of one ReadManyItem, as the C++ `tailgate_read many`."""
    if item.code:
        message = item.message.replace("\r", " ").replace("\n", " ")
        return "%d %s - %s %s\n" % (item.index, status_code(item.code).name,
                                    path, message)
    return "%d %d %d %s\n" % (item.index, item.response.status,
                              len(item.response.body), path)


_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}


def status_code(number):
    """The grpc.StatusCode of a ReadManyItem.code (UNKNOWN if none is)."""
    return _STATUS_CODES.get(number, grpc.StatusCode.UNKNOWN)


def read_many(args, paths, out, err):
    """One ReadMany call: a line per item as it arrives; the exit code."""
    request = tailgate_pb2.ReadManyRequest(
        reads=[build_request(args, path) for path in paths],
        max_in_flight=args.max_in_flight)
    options = [("grpc.max_receive_message_length", MAX_RECEIVE_MESSAGE_BYTES)]
    failed = None  # (index, exit code) of the failed read of lowest index
    with grpc.insecure_channel(args.target, options=options) as channel:
        stub = tailgate_pb2_grpc.HedgedReadStub(channel)
        # The call's deadline bounds the whole batch; items are yielded as
        # the sidecar sends them, in completion order.
        items = stub.ReadMany(request, timeout=args.deadline)
        try:
            for item in items:
                try:
                    out.write(item_line(item, paths[item.index]).encode())
                    out.flush()
                except OSError as error:
                    items.cancel()  # the sidecar cancels the rest
                    err.write("tailgate_read.py: cannot write to stdout: %s\n"
                              % error)
                    return EXIT_OUTPUT_ERROR
                if item.code:
                    code = EXIT_CODES.get(status_code(item.code),
                                          EXIT_OTHER_ERROR)
                else:
                    code = http_exit_code(item.response.status)
                if code != EXIT_OK and (failed is None or
                                        item.index < failed[0]):
                    failed = (item.index, code)
        except grpc.RpcError as error:
            err.write("tailgate_read.py: %s\n" % describe_error(error, args))
            return EXIT_CODES.get(error.code(), EXIT_OTHER_ERROR)
    return failed[1] if failed else EXIT_OK


def main(argv=None, out=None, err=None, inp=None):
    """Entry point; `out` takes bytes (default: stdout's buffer), `inp`
    gives text (default: stdin; --many without paths reads it)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    out, err = out or sys.stdout.buffer, err or sys.stderr
    if args.many:
        paths = args.paths
        if not paths:
            paths = [line.rstrip("\r") for line in
                     (inp or sys.stdin).read().split("\n")
                     if line.strip()]
        return read_many(args, paths, out, err)
    return read(args, out, err)


if __name__ == "__main__":
    sys.exit(main())
