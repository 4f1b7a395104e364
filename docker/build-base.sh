#!/usr/bin/env bash
# tfyarn-base: Debian bookworm (debootstrap, minbase) with Python 3.11 and nothing else, imported as a
# Docker image; no registry needed. Tasks get tfyarn's own code from their node (the executor runtime
# mounts it), so an image needs only what the job's command needs: build the frameworks on top.
# Tagged by this script's content, so a machine builds it once. Prints the image's name on stdout.
#   docker/build-base.sh            -> tfyarn-base:<12 hex digits>, also tagged tfyarn-base:latest
set -euo pipefail
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
tag="tfyarn-base:$(sha256sum "$0" | cut -c1-12)"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi
if ! command -v debootstrap >/dev/null; then
  echo "Installing Debian's debootstrap..." >&2
  sudo=$([ "$(id -u)" = 0 ] || echo sudo)
  $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq debootstrap >&2
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/tfyarn-base.XXXXXX")
trap 'rm -rf "$root"' EXIT
echo "Building $tag: debootstrap of Debian bookworm with Python 3.11 (about a minute)..." >&2
debootstrap --variant=minbase --include=python3,python-is-python3,ca-certificates bookworm "$root" "$mirror" \
  >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; exit 1; }
rm -f "$root.log"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*
echo "Importing it into Docker ($(du -sh "$root" | cut -f1))..." >&2
tar -C "$root" -c . | docker import -c 'CMD ["python"]' - "$tag" >/dev/null
docker tag "$tag" tfyarn-base:latest
echo "$tag"
