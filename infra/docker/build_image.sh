#!/usr/bin/env bash
# Build (or reuse) the docker backend's Spark image, offline-friendly:
#   1. BASE unset and no instantbench-debian:bookworm image: debootstrap a minimal Debian
#      bookworm from this machine's apt mirror and `docker import` it;
#   2. docker build --network host infra/docker/Dockerfile on that base (or on $BASE),
#      tagged instantbench-spark:<version>-<content hash> (python -m infra.docker.image tag).
# An image with the same tag is reused. Prints the tag on its last line.
#
# Env: BASE (e.g. python:3.11-slim-bookworm when a registry is reachable),
#      MIRROR (default: read from /etc/apt/sources.list.d/* or /etc/apt/sources.list),
#      PYTHON (the host's python with the project installed; default: python),
#      FORCE=1 (rebuild even when the tag exists), KEEP (project images kept, default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."

PYTHON=${PYTHON:-python}
tag=$("$PYTHON" -m infra.docker.image tag)
debian_base=instantbench-debian:bookworm

if [ "${FORCE:-0}" != 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
    echo "build_image: reusing $tag"
    echo "$tag"
    exit 0
fi

apt_mirror() {
    # deb822 (*.sources): the first URIs of a stanza whose Suites contain bookworm.
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '
            /^[[:space:]]*$/ { if (uri != "" && suites ~ /(^| )bookworm( |$)/) { print uri; exit }
                               uri=""; suites=""; next }
            /^URIs:/   { uri=$2 }
            /^Suites:/ { $1=""; suites=$0 " " }
            END        { if (uri != "" && suites ~ /(^| )bookworm( |$)/) print uri }
        ' "$f" | head -n1
    done
    # one-line format: deb [opts] URI bookworm main
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) {
                  if ($(i+1) == "bookworm") print $i; break } }'
}

if [ -z "${BASE:-}" ]; then
    BASE=$debian_base
    if ! docker image inspect "$debian_base" >/dev/null 2>&1; then
        mirror=${MIRROR:-$(apt_mirror | grep -E '^https?://' | head -n1 || true)}
        if [ -z "$mirror" ]; then
            echo "build_image: no bookworm mirror found in the apt sources; set MIRROR" >&2
            exit 1
        fi
        command -v debootstrap >/dev/null 2>&1 || {
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
        }
        root=$(mktemp -d /var/tmp/instantbench-rootfs.XXXXXX)
        trap 'rm -rf "$root"' EXIT
        echo "build_image: debootstrap bookworm from $mirror"
        start=$(date +%s)
        debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 || {
            tail -n 30 "$root.log" >&2
            exit 1
        }
        rm -f "$root.log"
        # The image's apt sources: the same mirror (bookworm, updates).
        printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$mirror" "$mirror" \
            >"$root/etc/apt/sources.list"
        rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
        tar -C "$root" -c . | docker import - "$debian_base" >/dev/null
        echo "build_image: imported $debian_base in $(($(date +%s) - start))s"
    fi
fi

ctx=$(mktemp -d /var/tmp/instantbench-context.XXXXXX)
trap 'rm -rf "$ctx" ${root:+"$root"}' EXIT
"$PYTHON" -m infra.docker.image context "$ctx"
# pip in the build trusts what pip on the host trusts (a proxy's CA, if any).
cert=${PIP_CERT:-$("$PYTHON" -m pip config get global.cert 2>/dev/null || true)}
if [ -n "$cert" ] && [ -f "$cert" ]; then cp "$cert" "$ctx/pip-ca.crt"; fi
build_args=(--build-arg "BASE=$BASE")
while read -r arg; do build_args+=(--build-arg "$arg"); done < <("$PYTHON" -m infra.docker.image build-args)

echo "build_image: building $tag on $BASE"
start=$(date +%s)
docker build --network host "${build_args[@]}" \
    --label instantbench.image=1 -t "$tag" -f infra/docker/Dockerfile "$ctx"
echo "build_image: built $tag in $(($(date +%s) - start))s"
# Keep the KEEP newest project images (older code); one in use by a container stays.
docker image ls "${tag%%:*}" --format '{{.Repository}}:{{.Tag}}' | tail -n +"$((${KEEP:-3} + 1))" \
    | xargs -r docker image rm >/dev/null 2>&1 || true
echo "$tag"
