"""Checks the Kubernetes manifests against each other, against their
ConfigMap's configuration and against the real sidecar:

- the native-sidecar form differs from the classic one only in where the
  tailgate container sits (initContainers with `restartPolicy: Always`
  against the first of `containers`) and in the classic form's preStop
  hook, so running the classic form under podman (deploy/test-pod) tests
  the native one's pod too;
- both mount the same ConfigMap as a directory, share the socket's emptyDir
  with the app, and probe and scrape the ports the configuration listens on;
- every container passes Pod Security "restricted" (no root, no
  privilege escalation, no capabilities, a read-only root filesystem,
  seccomp RuntimeDefault), and the app is another user than tailgate's
  that the socket's mode lets in through the pod's fsGroup;
- the memory limit covers the worst case of the configuration's limits
  (docs/OPERATIONS.md), and the grace period outlasts the drain;
- the ConfigMap's file is a configuration the real sidecar starts with.
"""

import copy
import os
import re
import unittest

import yaml
from google.protobuf import text_format

from client.testing import sidecar_harness
from tailgate.v1 import config_pb2

HERE = "deploy/kubernetes"
MIB = 1024 * 1024
# The process itself, idle (docs/OPERATIONS.md, "Memory").
BASE_RSS_BYTES = 25 * MIB
# Measured peak RSS under load with small answers (docs/BENCHMARKS.md).
MEASURED_RSS_BYTES = 26.6 * MIB
# The app's own shutdown the manifests budget for (their comments).
APP_SHUTDOWN_SECONDS = 10


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return {doc["kind"]: doc for doc in yaml.safe_load_all(f) if doc}


def quantity_bytes(text):
    number, unit = re.fullmatch(r"(\d+)(Mi|Gi)", text).groups()
    return int(number) * {"Mi": MIB, "Gi": 1024 * MIB}[unit]


def seconds(duration):
    number, unit = re.fullmatch(r"([\d.]+)(ms|s)", duration).groups()
    return float(number) / (1000 if unit == "ms" else 1)


def port_of(address):
    return int(address.rsplit(":", 1)[1])


class ManifestsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.configmap = load("configmap.yaml")["ConfigMap"]
        cls.native = load("native-sidecar.yaml")["Deployment"]
        cls.classic = load("classic.yaml")["Deployment"]
        cls.config_text = cls.configmap["data"]["sidecar.textproto"]
        cls.config = text_format.Parse(cls.config_text,
                                       config_pb2.SidecarConfig())

    def pod(self, deployment):
        return deployment["spec"]["template"]["spec"]

    def container(self, deployment, name):
        pod = self.pod(deployment)
        every = pod.get("initContainers", []) + pod["containers"]
        (found,) = [c for c in every if c["name"] == name]
        return found

    def forms(self):
        return {"native": self.native, "classic": self.classic}

    def test_the_network_policy_admits_prometheus_to_metrics_only(self):
        policy = load("networkpolicy.yaml")["NetworkPolicy"]
        labels = self.pod_labels(self.classic)
        self.assertEqual(labels, self.pod_labels(self.native))
        selector = policy["spec"]["podSelector"]["matchLabels"]
        self.assertTrue(set(selector.items()) <= set(labels.items()))
        self.assertEqual(policy["spec"]["policyTypes"], ["Ingress"])
        admin = port_of(self.config.admin)
        metrics = port_of(self.config.metrics_listen)
        admitted = {}
        for rule in policy["spec"]["ingress"]:
            for port in rule["ports"]:
                admitted.setdefault(port["port"], []).append(
                    rule.get("from"))
        # No pod reaches --admin; only Prometheus reaches the metrics.
        self.assertNotIn(admin, admitted)
        (sources,) = admitted[metrics]
        (prometheus,) = sources
        self.assertEqual(
            prometheus["podSelector"]["matchLabels"],
            {"app.kubernetes.io/name": "prometheus"})
        self.assertIn("namespaceSelector", prometheus)
        # Both ports are the pod's named container ports.
        for form in self.forms().values():
            ports = {p["name"]: p["containerPort"]
                     for p in self.container(form, "tailgate")["ports"]}
            self.assertEqual(ports, {"admin": admin, "metrics": metrics})

    def pod_labels(self, deployment):
        return deployment["spec"]["template"]["metadata"]["labels"]

    def test_native_differs_from_classic_only_where_tailgate_sits(self):
        native = copy.deepcopy(self.native)
        pod = self.pod(native)
        (tailgate,) = pod.pop("initContainers")
        self.assertEqual(tailgate["name"], "tailgate")
        self.assertEqual(tailgate.pop("restartPolicy"), "Always")
        pod["containers"].insert(0, tailgate)

        classic = copy.deepcopy(self.classic)
        classic_tailgate = self.pod(classic)["containers"][0]
        self.assertEqual(classic_tailgate["name"], "tailgate")
        self.assertIn("preStop", classic_tailgate.pop("lifecycle"))
        self.assertEqual(native, classic)

    def test_native_sidecar_gates_the_app_on_a_grpc_startup_probe(self):
        pod = self.pod(self.native)
        self.assertEqual([c["name"] for c in pod["initContainers"]],
                         ["tailgate"])
        tailgate = pod["initContainers"][0]
        self.assertEqual(tailgate["restartPolicy"], "Always")
        self.assertEqual(tailgate["startupProbe"]["grpc"],
                         {"port": port_of(self.config.admin),
                          "service": "tailgate.v1.Admin"})
        self.assertNotIn("lifecycle", tailgate)

    def test_probes_and_scraping_use_the_configured_ports(self):
        admin, metrics = (port_of(self.config.admin),
                          port_of(self.config.metrics_listen))
        for form, deployment in self.forms().items():
            with self.subTest(form=form):
                tailgate = self.container(deployment, "tailgate")
                ports = {p["name"]: p["containerPort"]
                         for p in tailgate["ports"]}
                self.assertEqual(ports, {"admin": admin, "metrics": metrics})
                for probe in ("startupProbe", "readinessProbe"):
                    self.assertEqual(tailgate[probe]["grpc"]["port"], admin)
                liveness = tailgate["livenessProbe"]["httpGet"]
                self.assertEqual(liveness["path"], "/healthz")
                self.assertEqual(ports[liveness["port"]], metrics)
                annotations = deployment["spec"]["template"]["metadata"][
                    "annotations"]
                self.assertEqual(annotations["prometheus.io/scrape"], "true")
                self.assertEqual(annotations["prometheus.io/port"],
                                 str(metrics))
                self.assertEqual(annotations["prometheus.io/path"],
                                 "/metrics")

    def test_both_mount_the_configmap_as_a_directory(self):
        for form, deployment in self.forms().items():
            with self.subTest(form=form):
                volumes = {v["name"]: v for v in self.pod(deployment)["volumes"]}
                self.assertEqual(volumes["tailgate-config"]["configMap"],
                                 {"name": self.configmap["metadata"]["name"]})
                tailgate = self.container(deployment, "tailgate")
                (mount,) = [m for m in tailgate["volumeMounts"]
                            if m["name"] == "tailgate-config"]
                # A subPath mount is never updated: reload would not see
                # an edit.
                self.assertNotIn("subPath", mount)
                self.assertEqual(
                    tailgate["args"],
                    ["--config=%s/sidecar.textproto" % mount["mountPath"]])

    def test_app_and_tailgate_share_the_socket_directory(self):
        socket_path = self.config.listen.removeprefix("unix:")
        self.assertNotEqual(socket_path, self.config.listen)
        for form, deployment in self.forms().items():
            with self.subTest(form=form):
                volumes = {v["name"]: v for v in self.pod(deployment)["volumes"]}
                self.assertEqual(volumes["tailgate-socket"], {
                    "name": "tailgate-socket", "emptyDir": {}})
                for name in ("tailgate", "app"):
                    (mount,) = [m for m in self.container(
                        deployment, name)["volumeMounts"]
                        if m["name"] == "tailgate-socket"]
                    self.assertEqual(mount["mountPath"],
                                     os.path.dirname(socket_path))
                env = {e["name"]: e["value"]
                       for e in self.container(deployment, "app")["env"]}
                self.assertEqual(env["TAILGATE_TARGET"], self.config.listen)

    def containers(self, deployment):
        pod = self.pod(deployment)
        return pod.get("initContainers", []) + pod["containers"]

    def test_every_container_passes_pod_security_restricted(self):
        # The "restricted" profile's checks, each container's own setting
        # over the pod's where both may say it.
        for form, deployment in self.forms().items():
            pod_context = self.pod(deployment).get("securityContext", {})
            self.assertEqual(pod_context.get("seccompProfile"),
                             {"type": "RuntimeDefault"}, form)
            self.assertIs(pod_context.get("runAsNonRoot"), True, form)
            self.assertEqual(
                {c["name"] for c in self.containers(deployment)},
                {"tailgate", "app"}, form)
            for container in self.containers(deployment):
                with self.subTest(form=form, container=container["name"]):
                    context = container.get("securityContext", {})
                    self.assertIs(context.get("runAsNonRoot"), True)
                    self.assertNotEqual(context.get("runAsUser"), 0)
                    self.assertIs(context.get("allowPrivilegeEscalation"),
                                  False)
                    self.assertEqual(context.get("capabilities"),
                                     {"drop": ["ALL"]})
                    self.assertIs(context.get("readOnlyRootFilesystem"),
                                  True)
                    self.assertEqual(context.get("seccompProfile"),
                                     {"type": "RuntimeDefault"})
                    self.assertNotIn("privileged", context)

    def test_the_app_is_another_user_let_in_by_the_pods_fs_group(self):
        mode = int(self.config.unix_socket_mode, 8)
        # Owner and group read and write; nobody else.
        self.assertEqual(mode & 0o660, 0o660)
        self.assertEqual(mode & 0o007, 0)
        for form, deployment in self.forms().items():
            with self.subTest(form=form):
                fs_group = self.pod(deployment)["securityContext"]["fsGroup"]
                tailgate = self.container(deployment, "tailgate")[
                    "securityContext"]
                app = self.container(deployment, "app")["securityContext"]
                self.assertNotEqual(app["runAsUser"], tailgate["runAsUser"])
                # The socket's group is the fsGroup (the emptyDir is setgid
                # to it) and, here, tailgate's own group too.
                self.assertEqual(tailgate["runAsGroup"], fs_group)
                self.assertNotEqual(app["runAsGroup"], fs_group)

    def test_memory_limit_covers_the_worst_case_of_the_limits(self):
        c = self.config
        worst = (BASE_RSS_BYTES + c.max_grpc_memory_bytes +
                 c.max_attempts * c.max_response_bytes +
                 2 * c.max_buffered_bytes)
        for form, deployment in self.forms().items():
            with self.subTest(form=form):
                resources = self.container(deployment, "tailgate")["resources"]
                limit = quantity_bytes(resources["limits"]["memory"])
                request = quantity_bytes(resources["requests"]["memory"])
                # A quarter on top for the allocator's slack.
                self.assertGreaterEqual(limit, worst * 1.25)
                self.assertGreaterEqual(request, MEASURED_RSS_BYTES)
                self.assertLessEqual(request, limit)

    def test_grace_period_outlasts_the_app_and_the_drain(self):
        drain = seconds(self.config.drain_timeout)
        for form, deployment in self.forms().items():
            with self.subTest(form=form):
                tailgate = self.container(deployment, "tailgate")
                if form == "classic":
                    # Every container gets SIGTERM at once: the hook holds
                    # tailgate's back for the app's shutdown.
                    command = tailgate["lifecycle"]["preStop"]["exec"][
                        "command"]
                    self.assertEqual(command[0], "/bin/sleep")
                    before_sigterm = int(command[1])
                    self.assertGreaterEqual(before_sigterm,
                                            APP_SHUTDOWN_SECONDS)
                else:
                    # Kubernetes sends it only once the app has exited.
                    before_sigterm = APP_SHUTDOWN_SECONDS
                grace = self.pod(deployment)["terminationGracePeriodSeconds"]
                self.assertGreater(grace, before_sigterm + drain)

    def test_the_configmap_file_starts_the_real_sidecar(self):
        path = os.path.join(os.environ["TEST_TMPDIR"], "sidecar.textproto")
        with open(path, "w") as f:
            f.write(self.config_text)
        # The harness puts its listeners on loopback and the default set on
        # a local replica: flags over the file, as --help says.
        with sidecar_harness.Replica("r") as replica:
            with sidecar_harness.Sidecar(
                    [replica.url], ["--config=" + path],
                    binary=sidecar_harness.SIDECAR) as sidecar:
                log = "".join(sidecar.log)
                self.assertIn('name=profiles', log)
                sidecar.close_expecting_success()


if __name__ == "__main__":
    unittest.main()
