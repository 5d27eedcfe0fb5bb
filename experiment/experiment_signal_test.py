"""A signal that stops //experiment stops the programs it started.

Runs the real binary in the seed scenario in a process group of its own,
waits until it has started a sidecar, signals it (or, as a terminal's
Ctrl-C does, its whole group), and checks that it ended by that signal
and that nothing it started outlived it. The same holds for a signal sent
at any moment: from the first instant of start-up, while it waits for its
programs to listen, and while a short run ends and it shuts down.
"""

import os
import signal
import subprocess
import time
import unittest

EXPERIMENT = os.path.join(os.environ["TEST_SRCDIR"], "tailgate", "experiment",
                          "experiment")
WAIT_S = 60

# Started in the background by a shell without job control, this process
# ignores SIGINT, and the experiment would inherit that through exec: a
# Ctrl-C before it has taken the signal over would be lost. A terminal's
# Ctrl-C reaches a program that does not ignore it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def stat_fields(pid):
    """The fields of /proc/PID/stat after the command name, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def executed(pid):
    """Whether `pid` runs the experiment's binary (its exec is done)."""
    try:
        return os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(
            EXPERIMENT)
    except OSError:
        return False


def children_of(pid):
    """Pids whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(entry)
            if fields and int(fields[1]) == pid:
                found.append(int(entry))
    return found


def live_in_group(pgid):
    """Pids of the group `pgid` that are not zombies."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(entry)
            if fields and int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry))
    return found


class ExperimentSignalTest(unittest.TestCase):

    def stop_with(self, signum, whole_group):
        experiment = subprocess.Popen(
            [EXPERIMENT, "--requests=100000"], stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True)
        pgid = experiment.pid
        try:
            deadline = time.monotonic() + WAIT_S
            while not children_of(experiment.pid):
                if experiment.poll() is not None:
                    self.fail("the experiment ended: " +
                              experiment.stderr.read())
                self.assertLess(time.monotonic(), deadline,
                                "the experiment started no program")
                time.sleep(0.05)

            if whole_group:
                os.killpg(pgid, signum)
            else:
                experiment.send_signal(signum)
            _, stderr = experiment.communicate(timeout=WAIT_S)
            self.assertEqual(experiment.returncode, -signum, stderr)
            self.assertIn("stopping the programs it ran", stderr)
            self.assertEqual(live_in_group(pgid), [],
                             "programs it started outlived it")
        finally:
            if experiment.poll() is None:
                os.killpg(pgid, signal.SIGKILL)
                experiment.wait()

    def stop_after(self, delay_s, signum, whole_group, requests):
        """Signals the experiment `delay_s` after it starts; returns its
        exit status. It either ended by the signal or (a short run, the
        signal after it) by itself with 0; either way none of its programs
        outlives it, and it never aborts on its own."""
        experiment = subprocess.Popen(
            [EXPERIMENT, f"--requests={requests}"], stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True)
        pgid = experiment.pid
        try:
            # From its exec: a signal that reaches the forked child before
            # it runs the experiment is taken by this interpreter's handler
            # there, not the experiment's.
            deadline = time.monotonic() + WAIT_S
            while not executed(experiment.pid):
                self.assertLess(time.monotonic(), deadline,
                                "the experiment never started")
                time.sleep(0.001)
            time.sleep(delay_s)
            try:
                if whole_group:
                    os.killpg(pgid, signum)
                else:
                    experiment.send_signal(signum)
            except ProcessLookupError:
                pass  # already ended (and reaped by nobody yet: a zombie)
            _, stderr = experiment.communicate(timeout=WAIT_S)
            where = f"signal {signum} after {delay_s} s:\n{stderr}"
            self.assertIn(experiment.returncode, (-signum, 0), where)
            self.assertNotIn("terminate called", stderr, where)
            self.assertEqual(live_in_group(pgid), [],
                             f"programs it started outlived it; {where}")
            return experiment.returncode
        finally:
            if experiment.poll() is None:
                os.killpg(pgid, signal.SIGKILL)
                experiment.wait()

    def test_signal_at_many_points_of_start_up(self):
        # From before its signal thread exists to well after its sidecar
        # listens; each point once with Ctrl-C to the group and once with
        # SIGTERM to the experiment alone. The run never ends by itself.
        for delay_s in (0, 0.002, 0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.3,
                        0.45, 0.6, 0.8, 1.0, 1.5, 2.5):
            for signum, whole_group in ((signal.SIGINT, True),
                                        (signal.SIGTERM, False)):
                with self.subTest(delay_s=delay_s, signum=signum):
                    self.assertEqual(
                        self.stop_after(delay_s, signum, whole_group,
                                        requests=100000), -signum)

    def test_signal_while_a_short_run_ends(self):
        # The shortest run (three arms of 100 reads, about 3 s on a quiet
        # host): the later signals land while it reports, stops its
        # programs and exits, or after it has ended.
        for delay_s in (0.8, 1.5, 2.0, 2.4, 2.7, 3.0, 3.4):
            with self.subTest(delay_s=delay_s):
                self.stop_after(delay_s, signal.SIGINT, True, requests=100)

    def test_sigterm(self):
        self.stop_with(signal.SIGTERM, whole_group=False)

    def test_sigint(self):
        self.stop_with(signal.SIGINT, whole_group=False)

    def test_ctrl_c_to_the_whole_group(self):
        self.stop_with(signal.SIGINT, whole_group=True)


if __name__ == "__main__":
    unittest.main()
