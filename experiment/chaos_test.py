"""A short chaos run of //experiment as a regression test.

Replica A is killed and restarted on the same port every few hundred
milliseconds while reads flow through a real sidecar; the test fails if a
single read fails or comes back with a wrong body (the experiment then
exits 1), or if the run did not actually kill the replica and cycle the
circuit. It asserts no latency figure.
"""

import json
import os
import subprocess
import unittest

EXPERIMENT = os.path.join(os.environ["TEST_SRCDIR"], "tailgate", "experiment",
                          "experiment")
TIMEOUT_S = 60


class ChaosTest(unittest.TestCase):

    def test_no_read_fails_while_a_replica_flaps(self):
        result = subprocess.run(
            [EXPERIMENT, "--scenario=chaos", "--duration=2s", "--rate=300",
             "--warmup=10"],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        self.assertEqual(result.returncode, 0,
                         result.stdout + result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 1, result.stdout)
        line = json.loads(lines[0])
        self.assertEqual(line["scenario"], "chaos")
        self.assertEqual(line["failures"], 0, line.get("first_failure"))
        self.assertEqual(line["body_mismatches"], 0)
        self.assertEqual(line["reads"], line["ok"])
        self.assertEqual(line["samples"], line["ok"])
        self.assertEqual(line["reads"] + line["dropped"], 600)
        # 2 s of 300 ms up / 200 ms down: kills at 0.3, 0.8, 1.3, 1.8 s.
        self.assertGreaterEqual(line["kills"], 3)
        self.assertEqual(line["restarts"], line["kills"])
        self.assertGreater(line["extra_attempts"]["fallbacks"], 0)
        self.assertGreater(line["circuit"]["logged_to_open"], 0)
        self.assertGreater(line["circuit"]["logged_to_closed"], 0)


if __name__ == "__main__":
    unittest.main()
