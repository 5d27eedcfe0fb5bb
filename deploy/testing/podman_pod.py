#!/usr/bin/env python3
"""Turns deploy/kubernetes/classic.yaml into the pod deploy/test-pod plays.

Prints one Pod (YAML) on stdout, and on stderr one line per change, each
something podman needs or the test's stand-ins:

  - kind Pod from the Deployment's template, named --pod_name (podman runs
    one pod; a Deployment's would be named after its replica index);
  - the tailgate container's image is the one deploy/build-image made;
  - the app container is the stand-in app (deploy/testing/read_loop in
    --app_image), with the app's volume mounts and environment kept;
  - the ConfigMap volume is a host directory (--config_dir): the test edits
    the file there as a ConfigMap update would (podman copies a
    --configmap's data once, at start, so it can never change);
  - the emptyDir volume is a host directory (--socket_dir), made here as
    the kubelet makes an emptyDir for a pod with an fsGroup: group fsGroup,
    set-group-ID, rwx for the group. podman 4.3 chowns a new volume to the
    user of whichever container mounts it first (tailgate or the app, by
    chance) and ignores fsGroup;
  - fsGroup is also given as supplementalGroups, which podman does apply,
    so that both containers have the group as Kubernetes would give it;
  - probes are dropped: podman 4.3 turns them into healthchecks run inside
    the container with systemd timers (curl for httpGet; grpc it does not
    know), none of which this host or the image has. deploy/test-pod checks
    /healthz from outside instead;
  - container ports are dropped: the test plays the pod on the host's
    network (`--network host`), where podman refuses port mappings; the
    ports the configuration names are the host's own.

Everything else (mounts, arguments, security context, resources)
is the classic manifest's own. The preStop hook stays in the file, but
podman 4.3 does not run it: on `podman pod stop` every container gets
SIGTERM at once, and tailgate drains at once.
"""

import argparse
import copy
import os
import sys

import yaml


def load_deployment(path):
    with open(path) as f:
        for doc in yaml.safe_load_all(f):
            if doc and doc.get("kind") == "Deployment":
                return doc
    raise SystemExit(f"{path}: no Deployment")


def podman_pod(deployment, args):
    template = copy.deepcopy(deployment["spec"]["template"])
    spec = template["spec"]
    changes = []

    def change(what):
        changes.append(what)

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": args.pod_name,
            "labels": template["metadata"].get("labels", {}),
            "annotations": template["metadata"].get("annotations", {}),
        },
        "spec": spec,
    }
    change(f"kind Pod named {args.pod_name} (the Deployment's template)")

    by_name = {c["name"]: c for c in spec["containers"]}
    tailgate, app = by_name["tailgate"], by_name["app"]
    tailgate["image"] = args.tailgate_image
    tailgate["imagePullPolicy"] = "Never"
    change(f"tailgate image {args.tailgate_image}")

    app["image"] = args.app_image
    app["imagePullPolicy"] = "Never"
    app["args"] = args.app_args
    change(f"app: {args.app_image} {' '.join(args.app_args)}")

    fs_group = spec.get("securityContext", {}).get("fsGroup")
    for volume in spec["volumes"]:
        if "configMap" in volume:
            del volume["configMap"]
            volume["hostPath"] = {"path": args.config_dir, "type": "Directory"}
            change(f"volume {volume['name']}: hostPath {args.config_dir}")
        if "emptyDir" in volume:
            del volume["emptyDir"]
            os.makedirs(args.socket_dir, exist_ok=True)
            if fs_group is not None:
                os.chown(args.socket_dir, 0, fs_group)
                os.chmod(args.socket_dir, 0o2770)
            volume["hostPath"] = {"path": args.socket_dir, "type": "Directory"}
            change(f"volume {volume['name']}: hostPath {args.socket_dir} "
                   f"(group {fs_group}, mode 2770, as for an fsGroup)")
    if fs_group is not None:
        spec["securityContext"]["supplementalGroups"] = [fs_group]
        change(f"supplementalGroups [{fs_group}] (the fsGroup)")

    for container in spec["containers"]:
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            if container.pop(probe, None) is not None:
                change(f"{container['name']}: no {probe}")
        if container.pop("ports", None) is not None:
            change(f"{container['name']}: no ports")
    return pod, changes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classic", required=True)
    parser.add_argument("--pod_name", required=True)
    parser.add_argument("--tailgate_image", required=True)
    parser.add_argument("--app_image", required=True)
    parser.add_argument("--config_dir", required=True)
    parser.add_argument("--socket_dir", required=True)
    parser.add_argument("app_args", nargs="+")
    args = parser.parse_args()
    pod, changes = podman_pod(load_deployment(args.classic), args)
    for line in changes:
        print(f"podman variant: {line}", file=sys.stderr)
    yaml.safe_dump(pod, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
