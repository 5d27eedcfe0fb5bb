# Sourced by deploy/build-image and deploy/test-pod: podman with the flags
# this kind of host needs. crun (podman's default runtime) refuses cgroups
# mounted in hybrid (v1) mode, so every command runs with runc and the
# cgroupfs manager; deploy/containers.conf drops the default ulimits.
# TAILGATE_PODMAN_RUNTIME=crun (for example) overrides the runtime.

deploy_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

pm() {
  CONTAINERS_CONF="$deploy_dir/containers.conf" podman \
    --runtime "${TAILGATE_PODMAN_RUNTIME:-runc}" --cgroup-manager=cgroupfs "$@"
}
