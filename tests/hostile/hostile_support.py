"""What the hostile-client tests share: the sidecar's memory and metrics as
the tests read them, waiting on a condition, and HostileTestCase, which
starts a sidecar per test and points the attacks at one of the two doors
that serve HedgedRead.Read: --listen served by the loop front (the
default, DOOR = "loop") or by the gRPC library alone (--listen_front=grpc,
DOOR = "grpc"), or the read door (--read_listen, DOOR = "read").

Memory bounds are checked against the plain build only: under
AddressSanitizer (`--config=asan`) the behaviour is checked, not RSS.
"""

import os
import re
import sys
import time
import unittest
import urllib.error
import urllib.request

import grpc

from client.testing.sidecar_harness import Replica, Sidecar
from proto.tailgate.v1 import tailgate_pb2
from proto.tailgate.v1 import tailgate_pb2_grpc

MIB = 1 << 20
# Set by the asan config (.bazelrc): the sidecar under test is instrumented.
SANITIZED = "ASAN_OPTIONS" in os.environ
# What the sidecar is before any attack (RSS after start-up is ~25 MiB):
# every bound is this plus what the flags allow.
BASELINE = 40 * MIB
# What the worst-case formula leaves out (docs/OPERATIONS.md): the
# allocator's slack and the gRPC threads a load starts after the base was
# measured. On a host busy with other builds the peak has come up to about
# 2.7 MiB above the formula's terms; on a quiet one 6 MiB below them.
FORMULA_SLACK = 8 * MIB
OK, CANCELLED, INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNIMPLEMENTED = (
    0, 1, 3, 8, 12)
# HTTP/2 error codes (RFC 9113 section 7).
PROTOCOL_ERROR, REFUSED_STREAM, CANCEL = 1, 7, 8

_READ_DOOR = re.compile(r"event=listening service=read addr=(\S+)")


def peak_rss(sidecar):
    with open("/proc/%d/status" % sidecar.process.pid) as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def current_rss(sidecar):
    with open("/proc/%d/status" % sidecar.process.pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def metric(sidecar, name, labels=""):
    text = urllib.request.urlopen(
        "http://%s/metrics" % sidecar.metrics, timeout=10).read().decode()
    pattern = r"^%s%s (\S+)$" % (re.escape(name),
                                  re.escape("{%s}" % labels) if labels else "")
    found = re.search(pattern, text, re.M)
    return float(found.group(1)) if found else None


def wait_for(condition, what, timeout=30.0):
    give_up = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)


def stats(sidecar):
    with grpc.insecure_channel(sidecar.admin) as channel:
        return tailgate_pb2_grpc.AdminStub(channel).GetStats(
            tailgate_pb2.GetStatsRequest(), timeout=10)


def read_door_address(sidecar):
    """The read door's address, from its event=listening line (logged
    after the three the harness waits for)."""
    found = []

    def listening():
        for line in list(sidecar.log):
            match = _READ_DOOR.search(line)
            if match:
                found.append(match.group(1))
                return True
        return False
    wait_for(listening, "the read door to listen")
    return found[0]


class HostileTestCase(unittest.TestCase):
    """One replica ("r", see sidecar_harness) per test, and the sidecars
    the test starts, each stopped (and required to exit 0) at the end.
    `sidecar.door` is the address of the door under attack."""

    DOOR = "loop"

    def setUp(self):
        self.replica = Replica("r")
        self.sidecars = []

    def tearDown(self):
        for sidecar in self.sidecars:
            code = sidecar.close()
            self.assertEqual(code, 0, "".join(sidecar.log))
        self.replica.close()

    def start(self, *flags, preexec_fn=None):
        door = {"loop": [], "grpc": ["--listen_front=grpc"],
                "read": ["--read_listen=127.0.0.1:0"]}[self.DOOR]
        sidecar = Sidecar([self.replica.url],
                          ["--timeout=5s"] + door + list(flags),
                          preexec_fn=preexec_fn)
        self.sidecars.append(sidecar)
        sidecar.door = (read_door_address(sidecar) if self.DOOR == "read"
                        else sidecar.target)
        return sidecar

    def listener(self):
        """The listener name the door's log lines carry."""
        return "read" if self.DOOR == "read" else "grpc"

    def assert_peak_below(self, sidecar, bound):
        # Under AddressSanitizer freed memory waits in its quarantine and
        # every byte has shadow memory: RSS says nothing about our bounds
        # there, so only the plain build checks them.
        if not SANITIZED:
            self.assertLess(peak_rss(sidecar), bound)

    def healthz(self, sidecar):
        try:
            with urllib.request.urlopen("http://%s/healthz" % sidecar.metrics,
                                        timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError as error:
            # Closed unanswered: at its connection cap the metrics listener
            # closes a new connection when none is idle to make room.
            return None, str(error)

    def try_read(self, sidecar):
        try:
            with grpc.insecure_channel(sidecar.door) as channel:
                return tailgate_pb2_grpc.HedgedReadStub(channel).Read(
                    tailgate_pb2.ReadRequest(path="/probe"), timeout=3).status
        except grpc.RpcError as error:
            return error.code()

    def assert_normal_read_works(self, sidecar):
        with grpc.insecure_channel(sidecar.door) as channel:
            response = tailgate_pb2_grpc.HedgedReadStub(channel).Read(
                tailgate_pb2.ReadRequest(path="/after"), timeout=10)
        self.assertEqual(response.status, 200)
        self.assertEqual(response.body, b"r:/after")

    def report(self, attack, sidecar, outcome):
        # Shown in the test log: the figures docs/RELIABILITY.md quotes.
        print("attack=%s door=%s peak_rss_mib=%.1f outcome=%s" %
              (attack, self.DOOR, peak_rss(sidecar) / MIB, outcome),
              file=sys.stderr)
