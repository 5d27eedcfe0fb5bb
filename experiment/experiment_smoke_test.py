"""Smoke test of //experiment: the real binary, briefly, in each scenario.

Checks behaviour only: exit codes, that stdout carries nothing but JSON
lines with the documented fields, that every read was accounted for, and
that a bad flag is one clear line with exit code 2. It asserts no latency
figure: benchmarks record those (docs/BENCHMARKS.md), tests do not.
"""

import json
import os
import subprocess
import tempfile
import unittest

EXPERIMENT = os.path.join(os.environ["TEST_SRCDIR"], "tailgate", "experiment",
                          "experiment")
TIMEOUT_S = 120

LATENCY_FIELDS = ["p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "samples"]
METRICS_FIELDS = ["requests", "rejected", "attempts", "hedges", "hedge_wins",
                  "timeouts", "backend_failures", "in_flight"]


def run(*flags, env=None):
    return subprocess.run([EXPERIMENT, *flags], capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=False, env=env)


class ExperimentSmokeTest(unittest.TestCase):

    def json_lines(self, *flags, env=None):
        """Runs the experiment; its stdout as parsed JSON objects."""
        result = run(*flags, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertTrue(lines, result.stderr)
        return [json.loads(line) for line in lines]

    def assert_fields(self, line, fields):
        for field in fields:
            self.assertIn(field, line)

    def assert_metrics(self, line):
        self.assertIn("attempts_per_request", line)
        self.assert_fields(line["metrics"], METRICS_FIELDS)

    def test_seed(self):
        plot_dir = os.path.join(os.environ["TEST_TMPDIR"], "plots")
        lines = self.json_lines("--requests=100", "--plot_dir=" + plot_dir)
        self.assertEqual([line["mode"] for line in lines],
                         ["baseline", "hedged", "auto"])
        for line in lines:
            self.assert_fields(line, ["mode", "requests", "warmup"] +
                               LATENCY_FIELDS)
            self.assert_metrics(line)
            self.assertEqual(line["requests"], 100)
            self.assertEqual(line["sidecar_transport"], "tcp")
            self.assertEqual(line["sidecar_door"], "listen")
            # --sidecar_cpus=auto: the last CPU we may use, given two.
            cpus = sorted(os.sched_getaffinity(0))
            self.assertEqual(line["sidecar_cpus"],
                             str(cpus[-1]) if len(cpus) >= 2 else "any")
            self.assertEqual(line["samples"], 100)
            self.assertEqual(line["metrics"]["requests"], 100)
            self.assertLessEqual(line["p50_ms"], line["p99_ms"])
            self.assertLessEqual(line["p99_ms"], line["max_ms"])
            # The split: every read has a round trip; the hedged reads are
            # the ones the sidecar says it hedged, each one hedge.
            self.assert_fields(line, ["grpc_round_trip_" + f
                                      for f in LATENCY_FIELDS])
            self.assertEqual(line["grpc_round_trip_samples"], 100)
            self.assertLessEqual(line["grpc_round_trip_p50_ms"],
                                 line["p50_ms"])
            self.assertEqual(line["hedged_samples"],
                             line["metrics"]["hedges"])
            self.assertEqual(line["hedged_sidecar_samples"],
                             line["hedged_samples"])
        baseline, hedged, learned = lines
        self.assertIsNone(baseline["hedged_p99_ms"])
        self.assertGreater(hedged["hedged_samples"], 0)
        self.assertLess(hedged["hedged_sidecar_p50_ms"],
                        hedged["hedged_p50_ms"])
        self.assertEqual(baseline["metrics"]["hedges"], 0)
        self.assertEqual(baseline["attempts_per_request"], 1.0)
        # The budget: extra attempts <= burst (4) + 0.25 * admitted.
        self.assertLessEqual(hedged["metrics"]["hedges"], 4 + 0.25 * 100)
        self.assertLessEqual(learned["metrics"]["hedges"], 4 + 0.25 * 100)
        self.assertEqual(hedged["hedge_delay_ms_at_end"], 5.0)
        # 100 reads and 50 warm-ups are enough to leave the 25 ms warm-up
        # delay.
        self.assertNotEqual(learned["hedge_delay_ms_at_end"], 25.0)
        self.assertGreater(learned["hedge_delay_ms_at_end"], 0)
        for name in ["seed_cdf.png", "seed_timeline.png"]:
            self.assertTrue(
                os.path.getsize(os.path.join(plot_dir, name)) > 0, name)

    def assert_sequential_lines(self, lines, requests):
        self.assertEqual([line["mode"] for line in lines],
                         ["baseline", "hedged", "auto"])
        for line in lines:
            self.assert_fields(line, LATENCY_FIELDS + [
                "adapted_" + f for f in LATENCY_FIELDS] + [
                    "adapted_attempts_per_request", "hedge_delay_ms_at_end"])
            self.assert_metrics(line)
            self.assertEqual(line["samples"], requests)
            self.assertEqual(line["adapted_samples"], requests // 2)
            self.assertEqual(line["metrics"]["requests"], requests)
        self.assertEqual(lines[0]["adapted_attempts_per_request"], 1.0)

    def test_correlated(self):
        self.assert_sequential_lines(
            self.json_lines("--scenario=correlated", "--requests=100",
                            "--warmup=10"), 100)

    def test_shifting(self):
        plot_dir = os.path.join(os.environ["TEST_TMPDIR"], "shifting_plots")
        lines = self.json_lines("--scenario=shifting", "--requests=300",
                                "--warmup=10", "--plot_dir=" + plot_dir)
        self.assert_sequential_lines(lines, 300)
        for line in lines:
            self.assertEqual(line["scenario"], "shifting")
        self.assertTrue(os.path.getsize(
            os.path.join(plot_dir, "shifting_timeline.png")) > 0)

    def test_seed_over_a_unix_socket(self):
        # A short directory of our own, so that its sockets can be seen
        # (and seen gone); TEST_TMPDIR is too long for a socket address.
        with tempfile.TemporaryDirectory(dir="/tmp") as socket_dir:
            env = dict(os.environ, TMPDIR=socket_dir)
            lines = self.json_lines("--requests=100",
                                    "--sidecar_transport=unix",
                                    "--sidecar_cpus=any", env=env)
            self.assertEqual(os.listdir(socket_dir), [])
        self.assertEqual([line["mode"] for line in lines],
                         ["baseline", "hedged", "auto"])
        for line in lines:
            self.assertEqual(line["sidecar_transport"], "unix")
            self.assertEqual(line["sidecar_cpus"], "any")
            self.assertEqual(line["samples"], 100)
            self.assertEqual(line["metrics"]["requests"], 100)

    def test_seed_through_the_read_door_over_a_unix_socket(self):
        with tempfile.TemporaryDirectory(dir="/tmp") as socket_dir:
            env = dict(os.environ, TMPDIR=socket_dir)
            lines = self.json_lines("--requests=100",
                                    "--sidecar_transport=unix",
                                    "--sidecar_door=read",
                                    "--sidecar_cpus=any", env=env)
            self.assertEqual(os.listdir(socket_dir), [])
        self.assertEqual([line["mode"] for line in lines],
                         ["baseline", "hedged", "auto"])
        for line in lines:
            self.assertEqual(line["sidecar_door"], "read")
            self.assertEqual(line["sidecar_transport"], "unix")
            self.assertEqual(line["samples"], 100)
            self.assertEqual(line["metrics"]["requests"], 100)

    def test_open_loop_point(self):
        plot_dir = os.path.join(os.environ["TEST_TMPDIR"], "open_loop_plots")
        lines = self.json_lines("--scenario=open_loop", "--rate=200",
                                "--duration=1s", "--warmup=10",
                                "--plot_dir=" + plot_dir)
        self.assertEqual([line["mode"] for line in lines],
                         ["baseline", "hedged"])
        for line in lines:
            self.assert_fields(line, ["offered_rps", "achieved_rps", "sent",
                                      "ok", "rejected", "failed", "dropped"] +
                               LATENCY_FIELDS)
            self.assert_metrics(line)
            self.assertEqual(line["offered_rps"], 200)
            self.assertEqual(line["mix"], "seed_any_phase")
            self.assertEqual(line["sent"] + line["dropped"], 200)
            self.assertEqual(line["ok"] + line["rejected"] + line["failed"],
                             line["sent"])
            self.assertEqual(line["samples"], line["ok"])
        self.assertTrue(
            os.path.getsize(os.path.join(plot_dir, "open_loop_cdf.png")) > 0)

    def test_throughput(self):
        lines = self.json_lines("--scenario=throughput", "--duration=1s",
                                "--concurrency=8", "--warmup=10")
        self.assertEqual(len(lines), 1)
        line = lines[0]
        self.assert_fields(line, ["concurrency", "sidecar_rps", "direct_rps",
                                  "ratio", "sidecar_peak_rss_kib"])
        self.assert_metrics(line)
        self.assertEqual(line["concurrency"], 8)
        self.assertGreater(line["sidecar_rps"], 0)
        self.assertGreater(line["direct_rps"], 0)
        self.assertGreater(line["sidecar_peak_rss_kib"], 0)

    def test_overload(self):
        lines = self.json_lines("--scenario=overload", "--rate=4000",
                                "--duration=500ms", "--warmup=10")
        self.assertEqual(len(lines), 1)
        line = lines[0]
        self.assert_metrics(line)
        self.assertEqual(line["max_requests"], 16)
        for name, offered in [("quiet_before", 500), ("overload", 4000),
                              ("quiet_after", 500)]:
            phase = line[name]
            self.assert_fields(phase, ["offered_rps", "achieved_rps", "sent",
                                       "sent_rps",
                                       "ok", "rejected", "failed", "dropped",
                                       "late_sends", "max_send_lag_ms",
                                       "rejected_p50_ms", "rejected_p99_ms",
                                       "rejected_samples", "rss_kib_at_end",
                                       "from_send_p99_ms",
                                       "from_send_samples"] +
                               LATENCY_FIELDS)
            self.assertEqual(phase["offered_rps"], offered)
            self.assertEqual(phase["sent"] + phase["dropped"], offered // 2)
            self.assertEqual(phase["ok"] + phase["rejected"] + phase["failed"],
                             phase["sent"])
            self.assertEqual(phase["samples"], phase["ok"])
            self.assertEqual(phase["rejected_samples"], phase["rejected"])
            self.assertEqual(phase["from_send_samples"], phase["ok"])
        rss = line["rss_kib"]
        self.assertGreaterEqual(rss["samples"], 1)
        self.assertLessEqual(rss["min"], rss["max"])
        # Not >= rss["max"]: the kernel syncs its per-thread RSS counters
        # lazily, so VmHWM may trail a VmRSS sample by a few pages.
        self.assertGreater(line["vm_hwm_kib"], 0)
        health = line["health"]
        self.assertEqual(health["healthz_status"], 200)
        self.assertTrue(health["new_channel_read_ok"])
        self.assertIsNotNone(health["recovery_ms"])

    def test_chaos_one_arm(self):
        # The comparison arm alone: it may lose reads (no fallback is paid
        # for) and still exits 0; the defaults arm is chaos_test's.
        lines = self.json_lines("--scenario=chaos", "--rate=200",
                                "--duration=1s", "--warmup=10",
                                "--chaos_arms=no_retry_budget")
        self.assertEqual(len(lines), 1)
        line = lines[0]
        self.assertEqual(line["arm"], "no_retry_budget")
        self.assertEqual(line["mode"], "chaos_no_retry_budget")
        self.assert_metrics(line)
        self.assert_fields(line, ["kills", "restarts", "reads", "failures",
                                  "body_mismatches", "extra_attempts",
                                  "circuit", "timeline", "sidecar_flags"] +
                           LATENCY_FIELDS)
        self.assertEqual(line["reads"] + line["dropped"], 200)
        self.assertEqual(line["body_mismatches"], 0)
        self.assertEqual(line["extra_attempts"]["fallbacks"], 0)
        self.assertEqual(len(line["timeline"]["failed"]), 10)

    def test_tenants(self):
        plot_dir = os.path.join(os.environ["TEST_TMPDIR"], "tenant_plots")
        lines = self.json_lines("--scenario=tenants", "--rate=50",
                                "--duration=1s", "--warmup=10",
                                "--requests=100", "--plot_dir=" + plot_dir)
        self.assertEqual([line.get("mode") for line in lines],
                         ["alone", "flood", "flood_no_share", "closed_alone",
                          "closed_flood", None])
        closed = lines[3:5]
        for line in closed:
            self.assertEqual(line["a_reads"], 100)
            self.assertEqual(line["a_samples"], 100)
            self.assertEqual(line["b_reads_failed"], 0)
            self.assert_fields(line, ["skipped", "ejections",
                                      "give_up_fallbacks", "b_hedges"])
        self.assertEqual(closed[0]["b_reads_ok"], 0)
        self.assertGreater(closed[1]["b_reads_ok"], 0)
        self.assertEqual(lines[5]["summary"], "closed_flood")
        self.assert_fields(lines[5], ["a_p99_alone_ms", "a_p99_flooded_ms",
                                      "a_p99_flooded_over_alone"])
        lines = lines[:3]
        for line in lines:
            self.assert_metrics(line)
            self.assertEqual(line["offered_rps"], 50)
            flood = line["mode"] != "alone"
            self.assertEqual(line["flood_rps"], 200 if flood else 0)
            self.assertEqual("b" in line, flood)
            for tenant in ["a", "b"] if flood else ["a"]:
                reads = line[tenant]
                self.assert_fields(reads, ["sent", "ok", "rejected", "failed",
                                           "tenant_requests",
                                           "tenant_rejected",
                                           "tenant_hedges",
                                           "tenant_hedge_wins"] +
                                   LATENCY_FIELDS)
                self.assertEqual(reads["tenant"], tenant)
                self.assertEqual(reads["failed"], 0)
                # Every read sent was admitted for its tenant or refused
                # (by its share, or before the engine saw it).
                self.assertEqual(reads["tenant_requests"] + reads["rejected"],
                                 reads["sent"])
                self.assertLessEqual(reads["tenant_rejected"],
                                     reads["rejected"])
                self.assertLessEqual(reads["tenant_hedge_wins"],
                                     reads["tenant_hedges"])
            self.assertEqual(line["a"]["sent"], 50)
        self.assertIn("--tenant_share=0.5", lines[1]["sidecar_flags"])
        self.assertIn("--tenant_share=1", lines[2]["sidecar_flags"])
        self.assertTrue(
            os.path.getsize(os.path.join(plot_dir, "tenants_cdf.png")) > 0)

    def test_cost(self):
        lines = self.json_lines("--scenario=cost", "--rate=200",
                                "--duration=1s", "--rounds=1",
                                "--concurrency=4")
        runs = [line for line in lines if "arm" in line]
        summaries = [line for line in lines if "summary" in line]
        self.assertEqual(sorted((r["point"], r["arm"]) for r in runs),
                         [("200/s", "direct"), ("200/s", "grpc_front"),
                          ("200/s", "http_door"), ("200/s", "tailgate"),
                          ("saturation", "direct"),
                          ("saturation", "grpc_front"),
                          ("saturation", "http_door"),
                          ("saturation", "tailgate")])
        for r in runs:
            self.assertEqual(r["failed"], 0, r)
            self.assertEqual(r["non_2xx"], 0, r)
            self.assertGreater(r["done"], 0, r)
            if r["arm"] == "direct":
                continue
            self.assert_fields(r, ["sidecar_cpu_s", "sidecar_cpu_us_per_read",
                                   "rss_kib", "rss_anon_kib", "rss_file_kib",
                                   "threads", "quiet_cpu_percent",
                                   "quiet_rss_kib", "quiet_rss_anon_kib",
                                   "quiet_threads"])
            self.assertGreater(r["threads"], 1)
            self.assertGreater(r["rss_anon_kib"], 0)
            # Every read h2load finished went through the sidecar (which
            # may also count reads cut off when h2load stopped).
            self.assertGreaterEqual(r["metrics"]["requests"], r["done"])
            self.assertEqual(r["metrics"]["rejected"], 0)
        self.assertEqual([s["summary"] for s in summaries],
                         ["200/s", "saturation"])
        for s in summaries:
            for arm in ["tailgate", "grpc_front", "http_door"]:
                self.assert_fields(s, [arm + "_cpu_us_per_read",
                                       arm + "_added_mean_us",
                                       arm + "_reads_ratio_to_direct",
                                       arm + "_rss_end_mib",
                                       arm + "_rss_quiet_mib"])
            self.assertNotIn("cpu_per_read_ratio", s)  # no --peer_gateway

    def test_sick(self):
        plot_dir = os.path.join(os.environ["TEST_TMPDIR"], "sick_plots")
        lines = self.json_lines("--scenario=sick", "--sick_kinds=gray",
                                "--sick_replicas=2", "--sick_rates=20",
                                "--sick_seconds=3", "--plot_dir=" + plot_dir)
        self.assertEqual(len(lines), 1)  # tailgate only: no --peer_gateway
        line = lines[0]
        self.assert_fields(line, ["errors", "p50_ms", "max_ms",
                                  "attempts_per_read_last10s",
                                  "first_fast_primary_s"])
        self.assertEqual((line["scenario"], line["target"], line["kind"],
                          line["replicas"], line["rate"], line["seconds"]),
                         ("sick", "tailgate", "gray", 2, 20.0, 3))
        # No assertion on failures: only that every read is accounted for.
        self.assertEqual(line["reads"], 60)
        self.assertEqual(line["failed"], sum(line["errors"].values()))
        self.assertIsNotNone(line["p99_ms"])
        self.assertGreaterEqual(line["attempts_per_read"], 1.0)
        self.assertIsNone(line["first_fast_primary_s"])  # gray never heals
        seconds = line["per_second"]
        self.assertEqual([s["t"] for s in seconds], [0, 1, 2])
        self.assertEqual(sum(s["reads"] for s in seconds), 60)
        self.assertEqual(sum(s["failed"] for s in seconds), line["failed"])
        for second in seconds:
            self.assert_fields(second, ["p99_ms", "attempts"])
            self.assertIn(len(second["primaries"]), [0, 2])
        self.assertTrue(any(len(s["primaries"]) == 2 for s in seconds))
        self.assertGreater(os.path.getsize(
            os.path.join(plot_dir, "sick_gray_2r_20rps.png")), 0)

    def test_fanout(self):
        plot_dir = os.path.join(os.environ["TEST_TMPDIR"], "fanout_plots")
        lines = self.json_lines("--scenario=fanout", "--fanout_sizes=20",
                                "--fanout_batches=5", "--rounds=1",
                                "--warmup=10", "--plot_dir=" + plot_dir)
        batches = [l for l in lines if l.get("part") == "batches"]
        self.assertEqual([l["arm"] for l in batches],
                         ["no_hedge", "hedged", "auto"])  # no --peer_gateway
        for line in batches:
            self.assert_fields(line, ["batch_" + f for f in LATENCY_FIELDS] +
                               ["attempts_per_key", "cpu_us_per_key",
                                "item_attempts_per_key", "hedge"])
            self.assertEqual((line["keys"], line["batches"]), (20, 5))
            self.assertEqual(line["batch_samples"], 5)
            # Every key was one admitted read, its attempts in its trace.
            self.assertEqual(line["metrics"]["requests"], 100)
            self.assertEqual(line["metrics"]["rejected"], 0)
            self.assertEqual(line["item_attempts_per_key"],
                             line["attempts_per_key"])
            self.assertLessEqual(line["batch_p50_ms"], line["batch_max_ms"])
        self.assertEqual(batches[0]["metrics"]["hedges"], 0)  # hedge.disable
        self.assertEqual(batches[0]["attempts_per_key"], 1.0)
        summary = [l for l in lines if l.get("summary") == "batches"]
        self.assertEqual(len(summary), 1)
        self.assert_fields(summary[0], ["hedged_p99_over_no_hedge",
                                        "auto_p99_over_no_hedge"])
        cost = [l for l in lines if l.get("part") == "per_key_cost"]
        self.assertEqual([l["arm"] for l in cost], ["read_many", "read_calls"])
        for line in cost:
            self.assert_fields(line, ["sidecar_cpu_us_per_key",
                                      "sidecar_user_us_per_key",
                                      "sidecar_system_us_per_key",
                                      "sidecar_threads",
                                      "experiment_process_cpu_us_per_key"])
            self.assertEqual(line["keys"], 100)  # one batch of 100, 1 round
            self.assertEqual(line["item_attempts_per_key"], 1.0)
        hot = [l for l in lines if l.get("part") == "hot_keys"]
        self.assertEqual([l["coalesce"] for l in hot], [False, True])
        off = hot[0]
        self.assertEqual(off["reads"], 4 * 1 * 100)  # 4 readers, 1 batch each
        self.assertEqual(off["read_samples"], off["reads"])
        # Without coalescing every read reaches a replica at least once.
        self.assertGreaterEqual(off["fetches"], off["reads"])
        if "skipped" not in hot[1]:  # a tailgate with --coalesce
            # Coalesced reads share attempts: no more fetches than attempts.
            self.assertLessEqual(hot[1]["fetches"], hot[1]["attempts"])
        for name in ["fanout_20_cdf.png", "fanout_per_key_cost_cdf.png",
                     "fanout_hot_keys_cdf.png"]:
            self.assertGreater(
                os.path.getsize(os.path.join(plot_dir, name)), 0, name)

    def test_bad_flags_are_one_line_and_exit_2(self):
        for flags, named in [(["--requests=10"], "--requests"),
                             (["--scenario=storm"], "--scenario"),
                             (["--scenario=chaos", "--replica_up=20s"],
                              "--replica_up"),
                             (["--scenario=overload", "--replica_down=1s"],
                              "--replica_down"),
                             (["--scenario=chaos", "--chaos_arms=shared"],
                              "--chaos_arms"),
                             (["--scenario=chaos",
                               "--chaos_arms=defaults,defaults"],
                              "--chaos_arms"),
                             (["--scenario=overload", "--chaos_arms=defaults"],
                              "--chaos_arms"),
                             (["--rate=100"], "--rate"),
                             (["--scenario=open_loop", "--rate=-1"], "--rate"),
                             (["--scenario=throughput", "--concurrency=0"],
                              "--concurrency"),
                             (["--sidecar_transport=quic"],
                              "--sidecar_transport"),
                             (["--sidecar_cpus=2-1"], "--sidecar_cpus"),
                             (["--scenario=tenants", "--concurrency=4"],
                              "--concurrency"),
                             (["--scenario=cost", "--rounds=0"], "--rounds"),
                             (["--rounds=2"], "--rounds"),
                             (["--scenario=cost", "--peer_gateway=/nonexistent"],
                              "--peer_gateway"),
                             (["--scenario=cost", "--warmup=10"], "--warmup"),
                             (["--scenario=sick", "--sick_kinds=flaky"],
                              "--sick_kinds"),
                             (["--scenario=sick", "--sick_replicas=1"],
                              "--sick_replicas"),
                             (["--scenario=sick", "--sidecar_cpus=1"],
                              "--sidecar_cpus"),
                             (["--sick_seconds=3"], "--sick_seconds"),
                             (["--scenario=fanout", "--fanout_sizes=1001"],
                              "--fanout_sizes"),
                             (["--scenario=fanout", "--fanout_batches=1"],
                              "--fanout_batches"),
                             (["--scenario=fanout", "--duration=1s"],
                              "--duration"),
                             (["--fanout_parts=batches"], "--fanout_parts")]:
            with self.subTest(flags=flags):
                result = run(*flags)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(result.stdout, "")
                lines = result.stderr.splitlines()
                self.assertEqual(len(lines), 1, result.stderr)
                self.assertIn(named + ":", lines[0])


if __name__ == "__main__":
    unittest.main()
