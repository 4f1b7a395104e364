#!/usr/bin/env bash
# Task images, built here from Debian and PyPI packages: no registry is needed. Prints the image's name.
#   docker/build-image.sh base    tfyarn-base:<hash>   Debian bookworm (debootstrap, minbase), Python 3.11
#   docker/build-image.sh tf      tfyarn-tf:<hash>     base + tensorflow-cpu and tf_keras from PyPI
#   docker/build-image.sh torch   tfyarn-torch:<hash>  base + Debian's python3-torch (CPU build, gloo)
# Each is also tagged :latest. The tag is a hash of this script (which pins every version), so a machine
# builds each image once; a changed pin builds a new one (and removes the old). Tasks need no tfyarn in their image: the
# executor runtime mounts the node's. Docker's vfs driver copies a whole image for every container
# (docker/README.md gives the sizes), so nothing is kept that a task does not import.
# Environment: DEBIAN_MIRROR (default deb.debian.org), PYTHON (runs pip for `tf`; default python3).
set -euo pipefail
kind="${1:-}"
case "$kind" in base|tf|torch) ;; *) echo "usage: $0 base|tf|torch" >&2; exit 2 ;; esac
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
python="${PYTHON:-python3}"
hash=$(sha256sum "$0" | cut -c1-12)
tag="tfyarn-$kind:$hash"
TF_PINS="tensorflow-cpu==2.21.0 tf_keras==2.21.0"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tfyarn-$kind.XXXXXX")
trap 'rm -rf "$work"' EXIT
base="tfyarn-base:$hash"
if [ "$kind" != base ]; then
  bash "$0" base >/dev/null
fi

case "$kind" in
base)
  if ! command -v debootstrap >/dev/null; then
    echo "Installing Debian's debootstrap..." >&2
    sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq debootstrap >&2
  fi
  root="$work/root"
  echo "Building $tag: debootstrap of Debian bookworm with Python 3.11 (about a minute)..." >&2
  debootstrap --variant=minbase --include=python3,python-is-python3,ca-certificates bookworm "$root" "$mirror" \
    >"$work/log" 2>&1 || { tail -20 "$work/log" >&2; exit 1; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/*
  echo "Importing it into Docker ($(du -sh "$root" | cut -f1))..." >&2
  tar -C "$root" -c . | docker import -c 'CMD ["python"]' - "$tag" >/dev/null
  ;;
tf)
  # pip runs here, for the image's Python (3.11, glibc 2.36), so the image needs no pip.
  platforms=(--platform manylinux2014_x86_64)
  for v in $(seq 17 36); do platforms+=(--platform "manylinux_2_${v}_x86_64"); done
  site="$work/site"
  echo "Building $tag: $TF_PINS from PyPI on $base (about a minute)..." >&2
  # shellcheck disable=SC2086
  "$python" -m pip install -q --disable-pip-version-check --target "$site" --no-compile --only-binary=:all: \
    --python-version 3.11 --implementation cp --abi cp311 "${platforms[@]}" $TF_PINS >&2
  # C++ headers and libclang serve building against TensorFlow, not running it: 0.5 GB less per container.
  rm -rf "$site"/tensorflow/include "$site"/clang "$site"/libclang-* "$site"/bin
  if "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    # Bytecode made here, valid without its sources' timestamps: no task compiles TensorFlow at import.
    "$python" -m compileall -q -j 0 --invalidation-mode unchecked-hash "$site" >/dev/null || true
  fi
  printf 'FROM %s\nCOPY site /usr/local/lib/python3.11/dist-packages\n' "$base" >"$work/Dockerfile"
  echo "Adding $(du -sh "$site" | cut -f1) of packages to Docker..." >&2
  docker build -q --network host -t "$tag" "$work" >/dev/null
  ;;
torch)
  echo "Building $tag: Debian's python3-torch on $base (about a minute)..." >&2
  cat >"$work/Dockerfile" <<EOF
FROM $base
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    python3-torch >/dev/null && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /usr/share/doc/* \
    /usr/share/man/*
EOF
  docker build -q --network host -t "$tag" "$work" >/dev/null
  ;;
esac
docker tag "$tag" "tfyarn-$kind:latest"
# Images this script built before its last change are dead weight (vfs keeps whole copies): remove them.
for old in $(docker images "tfyarn-$kind" --format '{{.Tag}}'); do
  case "$old" in "$hash"|latest) ;; *) docker rmi "tfyarn-$kind:$old" >/dev/null 2>&1 || true ;; esac
done
echo "Built $tag ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))." >&2
echo "$tag"
