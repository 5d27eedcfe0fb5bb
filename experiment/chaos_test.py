"""A short chaos run of //experiment as a regression test.

Replica A is killed and restarted on the same port every few hundred
milliseconds while reads flow through a real sidecar, once per arm: the
sidecar's defaults, then the same with no retry budget. The test fails if a
single read of the defaults arm fails or comes back with a wrong body (the
experiment then exits 1), or if the run did not actually kill the replica
and cycle the circuit. The comparison arm may lose reads without failing
the run, but it must take no fallback. It asserts no latency figure.
"""

import json
import os
import subprocess
import unittest

EXPERIMENT = os.path.join(os.environ["TEST_SRCDIR"], "tailgate", "experiment",
                          "experiment")
TIMEOUT_S = 120


class ChaosTest(unittest.TestCase):

    def assert_timeline_adds_up(self, line):
        timeline = line["timeline"]
        self.assertEqual(timeline["bucket_ms"], 100)
        # 2 s in 100 ms buckets, more if a read failed after the sends.
        self.assertGreaterEqual(len(timeline["failed"]), 20)
        self.assertEqual(len(timeline["fallbacks"]), len(timeline["failed"]))
        self.assertEqual(len(timeline["refused"]), len(timeline["failed"]))
        self.assertEqual(sum(timeline["failed"]), line["failures"])
        extra = line["extra_attempts"]
        self.assertEqual(sum(timeline["fallbacks"]), extra["fallbacks"])
        self.assertEqual(sum(timeline["refused"]),
                         extra["skipped_no_retry_budget"])
        self.assertEqual(len(timeline["kill_ms"]), line["kills"])
        self.assertEqual(len(timeline["restart_ms"]), line["restarts"])
        # 300 ms up, 200 ms down, from the start of the reads.
        for i, (kill, restart) in enumerate(zip(timeline["kill_ms"],
                                                timeline["restart_ms"])):
            self.assertGreaterEqual(kill, 300 + 500 * i)
            self.assertGreaterEqual(restart, kill)

    def test_no_read_fails_while_a_replica_flaps(self):
        plot_dir = os.path.join(os.environ["TEST_TMPDIR"], "plots")
        result = subprocess.run(
            [EXPERIMENT, "--scenario=chaos", "--duration=2s", "--rate=300",
             "--warmup=10", "--plot_dir=" + plot_dir],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        self.assertEqual(result.returncode, 0,
                         result.stdout + result.stderr)
        lines = [json.loads(text) for text in result.stdout.splitlines()]
        self.assertEqual([line["arm"] for line in lines],
                         ["defaults", "no_retry_budget"], result.stdout)
        for line in lines:
            self.assertEqual(line["scenario"], "chaos")
            self.assertEqual(line["body_mismatches"], 0)
            self.assertEqual(line["reads"] + line["dropped"], 600)
            # 2 s of 300 ms up / 200 ms down: kills at 0.3, 0.8, 1.3, 1.8 s.
            self.assertGreaterEqual(line["kills"], 3)
            self.assertEqual(line["restarts"], line["kills"])
            self.assertGreater(line["circuit"]["logged_ejected"], 0)
            self.assertGreater(line["circuit"]["logged_back"], 0)
            self.assert_timeline_adds_up(line)

        defaults, unpaid = lines
        self.assertEqual(defaults["mode"], "chaos")
        self.assertEqual(defaults["failures"], 0,
                         defaults.get("first_failure"))
        self.assertEqual(defaults["reads"], defaults["ok"])
        self.assertEqual(defaults["samples"], defaults["ok"])
        self.assertGreater(defaults["extra_attempts"]["fallbacks"], 0)
        self.assertEqual(
            defaults["extra_attempts"]["skipped_no_retry_budget"], 0)

        self.assertEqual(unpaid["mode"], "chaos_no_retry_budget")
        self.assertIn("--retry_fraction=0 --retry_per_second=0",
                      unpaid["sidecar_flags"])
        self.assertEqual(unpaid["extra_attempts"]["fallbacks"], 0)
        self.assertGreater(
            unpaid["extra_attempts"]["skipped_no_retry_budget"], 0)
        self.assertEqual(unpaid["reads"],
                         unpaid["ok"] + unpaid["failures"])

        self.assertGreater(
            os.path.getsize(os.path.join(plot_dir, "chaos_timeline.png")), 0)


if __name__ == "__main__":
    unittest.main()
