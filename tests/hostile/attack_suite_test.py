"""The attack suite: every attack of docs/RELIABILITY.md's "Hostile
clients" table, one after another, against one sidecar started with its
default flags in front of two fast loopback replicas (restarted, with the
same flags, before each attack with a memory target, so that no earlier
attack's memory hides its growth).

Each attack (a function of attacks.py, in an attacker process of its own)
runs for ATTACK_SECONDS while
  - a well-behaved victim (grpcio, its own connection) reads every 20 ms,
  - a prober asks the metrics port's /healthz every 250 ms,
  - the sidecar's resident memory is sampled every 50 ms (and its peak,
    VmHWM, reset at the start where the kernel allows),
  - during the idle-connection attack, once the attacker holds more
    connections than --listen takes, a new client connects every 0.5 s.
Then the attack is judged against the targets below, and one summary line
is printed: attack, victim_ok (successful reads/reads), p99_ms (over every
read, failed ones at the time they took), rss_growth_mib (peak less the
RSS before the attack), rss_base_mib and rss_end_mib (RSS before, and at
the end while the attacker still holds what it holds), healthz (ok, or
BLIND if it said 200 with no read succeeding for 3 s; then the count of
each answer), the victim's errors and the attacker's own counters. A
target an attack misses fails that attack's test with the figures, its
slowest reads and the sidecar's log; the next attack starts once the
sidecar serves again and its memory has settled.

Run: bazel test //tests/hostile:attack_suite_test --test_output=all

Connection counts (`count`) are capped by the descriptor limit the test
runs under; the summary line says when they were. The figures mean
something for the plain build only: under the sanitizers the suite is
skipped.
"""

import collections
import math
import multiprocessing
import os
import queue
import re
import resource
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request

import grpc

from client.testing.sidecar_harness import Sidecar
from proto.tailgate.v1 import tailgate_pb2
from proto.tailgate.v1 import tailgate_pb2_grpc
from tests.hostile import attacks
from tests.hostile.hostile_support import MIB, current_rss, peak_rss
from tests.hostile.loopback_replica import LoopbackReplica

ATTACK_SECONDS = 10.0
# Time the attacker process has to start (spawn, imports) before its
# attack begins; the victim's window is the attack's.
ATTACKER_START = 1.5
VICTIM_EVERY = 0.020
VICTIM_DEADLINE = 1.0
HEALTHZ_EVERY = 0.25
RSS_EVERY = 0.05
NEWCOMER_EVERY = 0.5

# The targets.
VICTIM_SUCCESS = 0.95
VICTIM_P99 = 0.250
# /healthz must not answer 200 when no read has succeeded for longer.
BLIND_WINDOW = 3.0
NEWCOMER_SERVED_WITHIN = 2.0
# --listen is full when the attacker holds all its connections but those
# of the victim, the /healthz probe and a newcomer (a few).
FULL_MARGIN = 8
MAX_BUFFERED_BYTES = 64 * MIB  # the default of --max_buffered_bytes
WATCH_RSS_GROWTH = 96 * MIB
WINDOW_ZERO_RSS_GROWTH = 1.5 * MAX_BUFFERED_BYTES + 32 * MIB
# ReadMany calls whose answers are small: the request memory
# (--max_grpc_memory_bytes, 64 MiB by default, which a batch's state is
# charged to) and slack.
READMANY_RSS_GROWTH = 64 * MIB + 32 * MIB

# Descriptors the test process keeps for itself when it caps `count`.
SPARE_DESCRIPTORS = 256
SANITIZED = "ASAN_OPTIONS" in os.environ or "UBSAN_OPTIONS" in os.environ

Attack = collections.namedtuple(
    "Attack", ["name", "run", "knobs", "rss_growth_bound", "newcomers"])

# The table, in the order of docs/RELIABILITY.md: what each attack does
# is its function's docstring.
ATTACKS = [
    Attack("hpack_bomb", attacks.hpack_bomb, {"connections": 3}, None,
           False),
    Attack("held_requests", attacks.held_requests,
           {"connections": 5, "streams": 256, "body": 64 * 1024}, None,
           False),
    Attack("idle_connections", attacks.idle_connections, {"count": 5000},
           None, True),
    Attack("unread_watches", attacks.unread_watches,
           {"connections": 300, "streams": 256}, WATCH_RSS_GROWTH, False),
    Attack("window_zero", attacks.window_zero,
           {"reads": 200, "answer": MIB}, WINDOW_ZERO_RSS_GROWTH, False),
    Attack("rapid_reset", attacks.rapid_reset, {"connections": 2}, None,
           False),
    Attack("answers_then_idle", attacks.answers_then_idle,
           {"count": 2000, "answer": MIB}, None, False),
    Attack("window_update_flood", attacks.window_update_flood,
           {"connections": 2}, None, False),
    Attack("priority_flood", attacks.priority_flood, {"connections": 2},
           None, False),
    Attack("empty_data_flood", attacks.empty_data_flood, {"connections": 2},
           None, False),
    Attack("readmany_trickle", attacks.readmany_window_drip,
           {"batches": 2, "reads": 1000, "answer": 64, "increment": 600},
           READMANY_RSS_GROWTH, False),
]

# Attacks whose targets the sidecar does not meet yet (docs/RELIABILITY.md
# says by how much): run only with TAILGATE_UNMET_ATTACKS=1, so that they
# can be measured without failing the suite.
UNMET_ATTACKS = [
    Attack("readmany_burst", attacks.readmany_burst,
           {"threads": 4, "batches": 8, "reads": 1000}, READMANY_RSS_GROWTH,
           False),
    Attack("readmany_window_zero", attacks.readmany_window_drip,
           {"batches": 1, "reads": 1000, "answer": 4 * MIB,
            "increment": 4 * MIB}, WINDOW_ZERO_RSS_GROWTH, False),
]
if os.environ.get("TAILGATE_UNMET_ATTACKS") == "1":
    ATTACKS = ATTACKS + UNMET_ATTACKS


def every(period, start_at, stop_at, action):
    """A thread calling action() every `period` seconds from start_at until
    stop_at (at once again when a call ran past its turn)."""
    def loop():
        turn = start_at
        while True:
            now = time.monotonic()
            if now >= stop_at:
                return
            if now < turn:
                time.sleep(min(turn, stop_at) - now)
                continue
            action()
            turn = max(turn + period, time.monotonic())
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def read_once(stub, path, deadline):
    """(seconds taken, None if the read succeeded or what went wrong)."""
    started = time.monotonic()
    try:
        response = stub.Read(tailgate_pb2.ReadRequest(path=path),
                             timeout=deadline)
        error = None if response.status == 200 else "http_%d" % response.status
    except grpc.RpcError as failure:
        error = failure.code().name
    return time.monotonic() - started, error


def healthz(sidecar):
    try:
        with urllib.request.urlopen("http://%s/healthz" % sidecar.metrics,
                                    timeout=2) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return "no_answer"


def reset_peak_rss(pid):
    """Resets the process's VmHWM to its current RSS; False where the
    kernel does not let us (the sampled RSS is the peak then)."""
    try:
        with open("/proc/%d/clear_refs" % pid, "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def blind_probes(probes, successes, start_at):
    """When (seconds into the attack) /healthz began a probe it answered
    200 while no read had succeeded for more than BLIND_WINDOW (reads that
    succeeded before the attack count as at start_at)."""
    blind = []
    for started, status in probes:
        last_success = max([t for t in successes if t <= started],
                           default=start_at)
        if status == 200 and started - last_success > BLIND_WINDOW:
            blind.append(started - start_at)
    return blind


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


class Figures:
    """What one attack's observers recorded. Times are time.monotonic()."""

    def __init__(self):
        self.reads = []      # (ended at, seconds, error or None)
        self.probes = []     # (started at, HTTP status or "no_answer")
        self.rss = []        # VmRSS samples, bytes
        self.newcomers = []  # (seconds to a first read, error or None)
        self.start_at = 0.0
        self.baseline = 0
        self.log = []  # the sidecar's log lines during the attack
        self.peak = 0
        self.attacker = {}


class AttackSuiteTest(unittest.TestCase):
    """One sidecar for the whole table (a fresh one, same flags, for each
    attack with a memory target); one test per attack (generated below,
    in the table's order)."""

    summary = []

    @classmethod
    def setUpClass(cls):
        if SANITIZED:
            raise unittest.SkipTest("figures are for the plain build")
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        cls.descriptors = hard
        cls.replicas = [LoopbackReplica(), LoopbackReplica()]
        cls.sidecar = None
        cls.start_sidecar()

    @classmethod
    def start_sidecar(cls):
        """Stops the sidecar there is (it must exit 0) and starts one with
        the default flags."""
        cls.stop_sidecar()
        cls.sidecar = Sidecar([replica.url for replica in cls.replicas])
        limits = next(line for line in cls.sidecar.log
                      if "event=connection_limits" in line)
        cls.listen_limit = int(re.search(r" listen=(\d+)", limits).group(1))

    @classmethod
    def stop_sidecar(cls):
        if cls.sidecar is None:
            return
        sidecar, cls.sidecar = cls.sidecar, None
        code = sidecar.close()
        if code != 0:
            raise AssertionError("sidecar exited %s:\n%s" %
                                 (code, "".join(sidecar.log[-50:])))

    @classmethod
    def tearDownClass(cls):
        try:
            cls.stop_sidecar()
        finally:
            for replica in cls.replicas:
                replica.close()
            print("\n".join(["", "attack suite (%d descriptors, --listen "
                             "takes %d connections):" % (
                                 cls.descriptors, cls.listen_limit)] +
                            cls.summary), file=sys.stderr)

    def scaled(self, knobs):
        """The attack's knobs, `count` (connections) capped to what the
        descriptor limit lets the attacker hold."""
        knobs = dict(knobs)
        if "count" in knobs:
            knobs["count"] = min(knobs["count"],
                                 self.descriptors - SPARE_DESCRIPTORS)
        return knobs

    def wait_until_serving(self, stub, timeout=30.0):
        """Before an attack: /healthz says 200 and a read succeeds (the
        previous attack is over)."""
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            if (healthz(self.sidecar) == 200 and
                    read_once(stub, "/ready", VICTIM_DEADLINE)[1] is None):
                return
            time.sleep(0.2)
        self.fail("the sidecar did not serve again within %.0f s after the "
                  "previous attack" % timeout)

    def wait_until_memory_settles(self, timeout=10.0):
        """Before an attack: what the previous one freed has left RSS
        (two samples 0.5 s apart within 1 MiB), so that it is not taken
        for this one's baseline."""
        give_up = time.monotonic() + timeout
        last = current_rss(self.sidecar)
        while time.monotonic() < give_up:
            time.sleep(0.5)
            now = current_rss(self.sidecar)
            if abs(now - last) < MIB:
                return
            last = now

    def run_attack(self, attack, knobs):
        """Runs the attack while the observers record; its Figures."""
        with grpc.insecure_channel(self.sidecar.target) as channel:
            return self.attack_with_victim(
                attack, knobs, tailgate_pb2_grpc.HedgedReadStub(channel))

    def attack_with_victim(self, attack, knobs, stub):
        sidecar, figures = self.sidecar, Figures()
        pid = sidecar.process.pid
        self.wait_until_serving(stub)
        self.wait_until_memory_settles()
        context = multiprocessing.get_context("spawn")
        progress = context.Value("i", 0)
        results = context.Queue()
        start_at = time.monotonic() + ATTACKER_START
        stop_at = start_at + ATTACK_SECONDS
        attacker = context.Process(
            target=attacks.run_attacker, daemon=True,
            args=(attack.run, sidecar.target, start_at, stop_at, progress,
                  knobs, results))
        log_from = len(sidecar.log)
        attacker.start()
        figures.start_at = start_at
        figures.baseline = current_rss(sidecar)
        peak_resets = reset_peak_rss(pid)

        def victim():
            seconds, error = read_once(stub, "/victim", VICTIM_DEADLINE)
            figures.reads.append((time.monotonic(), seconds, error))

        def probe():
            started = time.monotonic()
            figures.probes.append((started, healthz(sidecar)))

        def sample():
            figures.rss.append(current_rss(sidecar))

        def newcomer():
            if progress.value < self.listen_limit - FULL_MARGIN:
                return  # the attacker has not filled --listen yet
            with grpc.insecure_channel(sidecar.target) as fresh:
                figures.newcomers.append(read_once(
                    tailgate_pb2_grpc.HedgedReadStub(fresh), "/newcomer",
                    NEWCOMER_SERVED_WITHIN + 1.0))

        observers = [every(VICTIM_EVERY, start_at, stop_at, victim),
                     every(HEALTHZ_EVERY, start_at, stop_at, probe),
                     every(RSS_EVERY, start_at, stop_at, sample)]
        if attack.newcomers:
            observers.append(every(NEWCOMER_EVERY, start_at, stop_at,
                                   newcomer))
        for observer in observers:
            observer.join()
        figures.log = sidecar.log[log_from:]
        figures.peak = max(figures.rss + [figures.baseline] +
                           ([peak_rss(sidecar)] if peak_resets else []))
        try:
            status, figures.attacker = results.get(timeout=30)
        except queue.Empty:
            status, figures.attacker = "error", "the attacker never reported"
        attacker.join(timeout=10)
        if attacker.is_alive():
            attacker.terminate()
            attacker.join()
        self.assertEqual(status, "ok", figures.attacker)
        return figures

    def judge(self, attack, knobs, figures):
        """The summary line, and the targets the attack missed."""
        missed = []
        ok = [r for r in figures.reads if r[2] is None]
        total = len(figures.reads)
        p99 = percentile([r[1] for r in figures.reads], 0.99) if total else 0
        if total == 0 or len(ok) < VICTIM_SUCCESS * total:
            missed.append("victim reads %d of %d successful (target %d %%)" %
                          (len(ok), total, VICTIM_SUCCESS * 100))
        if p99 > VICTIM_P99:
            missed.append("victim p99 %.0f ms (target %.0f ms)" %
                          (p99 * 1000, VICTIM_P99 * 1000))
        first = figures.start_at
        blind = blind_probes(figures.probes, [r[0] for r in ok], first)
        if blind:
            missed.append("/healthz said 200 at %s s with no read "
                          "succeeding for %.0f s before" %
                          (", ".join("%.1f" % t for t in blind[:5]),
                           BLIND_WINDOW))
        growth = (figures.peak - figures.baseline) / MIB
        end = (figures.rss[-1] if figures.rss else figures.baseline) / MIB
        if (attack.rss_growth_bound is not None and
                figures.peak - figures.baseline > attack.rss_growth_bound):
            missed.append("peak RSS grew %.1f MiB (target %.1f MiB)" %
                          (growth, attack.rss_growth_bound / MIB))
        newcomer_ms = ""
        if attack.newcomers:
            if not figures.newcomers:
                missed.append("the attacker never filled --listen's %d "
                              "connections" % self.listen_limit)
            else:
                slowest = max(seconds for seconds, _ in figures.newcomers)
                served = [n for n in figures.newcomers if n[1] is None and
                          n[0] <= NEWCOMER_SERVED_WITHIN]
                newcomer_ms = " newcomers=%d/%d max_ms=%.0f" % (
                    len(served), len(figures.newcomers), slowest * 1000)
                if len(served) < len(figures.newcomers):
                    missed.append("new clients served within %.0f s: %d of "
                                  "%d" % (NEWCOMER_SERVED_WITHIN,
                                          len(served),
                                          len(figures.newcomers)))
        statuses = collections.Counter(str(s) for _, s in figures.probes)
        errors = collections.Counter(r[2] for r in figures.reads if r[2])
        scaled = ("" if knobs == attack.knobs else
                  " scaled_to_descriptors=%s" % knobs)
        line = ("attack=%s victim_ok=%d/%d p99_ms=%.0f rss_growth_mib=%.1f "
                "rss_base_mib=%.1f rss_end_mib=%.1f healthz=%s(%s)%s "
                "victim_errors=%s attacker=%s%s" % (
                    attack.name, len(ok), total, p99 * 1000, growth,
                    figures.baseline / MIB, end,
                    "BLIND" if blind else "ok",
                    ",".join("%s:%d" % kv for kv in sorted(statuses.items())),
                    newcomer_ms,
                    ",".join("%s:%d" % kv for kv in errors.items()) or "-",
                    ",".join("%s:%s" % kv
                             for kv in sorted(figures.attacker.items())),
                    scaled))
        if missed:
            slowest = sorted(figures.reads, key=lambda r: -r[1])[:5]
            missed.append("slowest victim reads (ms at s into the attack): " +
                          ", ".join("%.0f at %.1f%s" % (
                              seconds * 1000, ended - seconds - first,
                              " " + error if error else "")
                              for ended, seconds, error in slowest))
            missed.append("sidecar log during the attack (%d lines):\n%s" % (
                len(figures.log), "".join(figures.log[:20])))
        return line, missed

    def check(self, attack):
        if attack.rss_growth_bound is not None:
            # A sidecar no other attack has grown: the allocator keeps
            # some of what an earlier attack freed, and this one would
            # grow into it unseen.
            self.start_sidecar()
        knobs = self.scaled(attack.knobs)
        figures = self.run_attack(attack, knobs)
        line, missed = self.judge(attack, knobs, figures)
        self.summary.append(line)
        print(line, file=sys.stderr)
        if missed:
            self.fail("%s missed: %s\n%s" % (attack.name, "; ".join(missed),
                                             line))


def _add_tests():
    for number, attack in enumerate(ATTACKS, 1):
        def test(self, attack=attack):
            self.check(attack)
        test.__doc__ = "%s: %s" % (attack.name,
                                   attack.run.__doc__.split("\n")[0])
        setattr(AttackSuiteTest, "test_%02d_%s" % (number, attack.name), test)


_add_tests()

if __name__ == "__main__":
    unittest.main()
