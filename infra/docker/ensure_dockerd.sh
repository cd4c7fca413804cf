#!/usr/bin/env bash
# Make sure a docker engine answers. If none does: install Debian's docker.io (and
# debootstrap, for the offline base image) and start dockerd in the background with host
# networking only in mind (no bridge, no iptables rules), overlay2 storage.
#
# Env: DOCKERD_LOG (default /var/log/instantbench-dockerd.log),
#      DOCKERD_WAIT_S (default 60).
set -euo pipefail

log=${DOCKERD_LOG:-/var/log/instantbench-dockerd.log}
wait_s=${DOCKERD_WAIT_S:-60}

if docker info >/dev/null 2>&1; then
    echo "ensure_dockerd: a docker engine answers"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "ensure_dockerd: no docker engine answers and this is not root; start one" >&2
    exit 1
fi

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
    echo "ensure_dockerd: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

echo "ensure_dockerd: starting dockerd (log: $log)"
# setsid + nohup: dockerd outlives this script and the CI step's process group. It keeps
# no descriptor but its log: one inherited from a caller (a `flock` held around the CI
# run, a pipe) would stay open for as long as dockerd lives.
(
    for fd in /proc/self/fd/*; do
        n=${fd##*/}
        if [ "$n" -gt 2 ]; then eval "exec $n>&-" 2>/dev/null || true; fi
    done
    exec setsid nohup dockerd --bridge=none --iptables=false --ip6tables=false \
        --storage-driver=overlay2
) >"$log" 2>&1 </dev/null &

for _ in $(seq "$wait_s"); do
    if docker info >/dev/null 2>&1; then
        echo "ensure_dockerd: dockerd answers"
        exit 0
    fi
    sleep 1
done
echo "ensure_dockerd: dockerd did not answer within ${wait_s}s; last lines of $log:" >&2
tail -n 30 "$log" >&2 || true
exit 1
