#!/usr/bin/env bash
# Builds the container images slotgate's container provider uses on an
# engine with no image registry, from the binaries Debian installed on this
# host (make deps): FROM scratch + the binary + the shared libraries ldd
# lists + the dynamic loader (+ /bin/sh, share files and a passwd file for
# PostgreSQL). Nothing is pulled.
#
#   scripts/images.sh [valkey|postgres|all]     (default all)
#
# Tags: slotgate/valkey:<valkey version>-local, slotgate/postgres:<major>-local
# (never a public image's name, so a local build cannot shadow one). It is
# idempotent: each image carries the sha256 of its inputs as the label
# slotgate.content, and an image whose label matches is not rebuilt.
#
# stdout is exactly the settings that select the images, one per line, so
#   eval "$(scripts/images.sh)"
# points the fixtures at them; progress goes to stderr.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
case "$what" in
valkey | postgres | all) ;;
*)
	echo "images: unknown image '$what' (want valkey, postgres or all)" >&2
	exit 2
	;;
esac
command -v docker >/dev/null || {
	echo "images: docker not found; the container provider needs a Docker engine" >&2
	exit 2
}
docker info >/dev/null 2>&1 || {
	echo "images: the Docker engine does not answer (docker info failed)" >&2
	exit 2
}
export DOCKER_BUILDKIT=0 # the legacy builder needs no buildx plugin and pulls nothing for FROM scratch

work=$(mktemp -d "${TMPDIR:-/tmp}/slotgate-images.XXXXXX")
trap 'rm -rf "$work"' EXIT

# manifest lines are "<source>\t<destination>", one per file to put into
# rootfs/; add resolves symlinks so the image holds real files.
manifest=$work/manifest
add() { # add SRC [DEST]
	printf '%s\t%s\n' "$(readlink -f "$1")" "${2:-$1}" >>"$manifest"
}
add_libs() { # add_libs BINARY... : every shared library ldd lists, and the loader
	local lib
	for lib in $(ldd "$@" 2>/dev/null | awk '/=> \// {print $3} /^\t\/[^ ]+ \(/ {print $1}' | sort -u); do
		add "$lib"
	done
}

# content_hash prints the sha256 of the manifest's files, their destinations
# and modes, and the given extra files (Dockerfile, entrypoint, this script).
content_hash() {
	local sorted=$work/manifest.sorted
	sort -u "$manifest" >"$sorted"
	{
		# One sha256sum and one stat for every file: hundreds of share files
		# would cost seconds as one process each.
		paste <(cut -f2 "$sorted") \
			<(cut -f1 "$sorted" | xargs -d '\n' stat -c %a) \
			<(cut -f1 "$sorted" | xargs -d '\n' sha256sum | cut -d' ' -f1)
		cat "$@"
	} | sha256sum | cut -d' ' -f1
}

stage() { # stage DIR: copy the manifest into DIR/rootfs
	local src dest
	mkdir -p "$1/rootfs"
	sort -u "$manifest" | while IFS=$'\t' read -r src dest; do
		mkdir -p "$1/rootfs$(dirname "$dest")"
		cp -p "$src" "$1/rootfs$dest"
	done
}

# build TAG DOCKERFILE HASH CONTEXT [BUILD-ARG...]
build() {
	local tag=$1 dockerfile=$2 hash=$3 ctx=$4
	shift 4
	local have old
	have=$(docker image inspect --format '{{ index .Config.Labels "slotgate.content" }}' "$tag" 2>/dev/null || true)
	if [ "$have" = "$hash" ]; then
		echo "images: $tag is up to date (content ${hash:0:12})" >&2
		return
	fi
	old=$(docker image inspect --format '{{ .Id }}' "$tag" 2>/dev/null || true)
	cp "$dockerfile" "$ctx/Dockerfile"
	local args=()
	for a in "$@"; do args+=(--build-arg "$a"); done
	if ! docker build -q "${args[@]}" --label "slotgate.content=$hash" -t "$tag" "$ctx" >"$work/build.log" 2>&1; then
		cat "$work/build.log" >&2
		echo "images: building $tag failed" >&2
		exit 1
	fi
	echo "images: built $tag (content ${hash:0:12}, $(docker image inspect --format '{{ .Size }}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))" >&2
	# The previous build of this tag is now untagged: remove it unless a
	# container still uses it.
	if [ -n "$old" ] && [ "$old" != "$(docker image inspect --format '{{ .Id }}' "$tag")" ]; then
		docker rmi "$old" >/dev/null 2>&1 || true
	fi
}

build_valkey() {
	local bin version tag
	bin=$(command -v valkey-server) || {
		echo "images: valkey-server not installed (make deps)" >&2
		exit 2
	}
	version=$(valkey-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p')
	tag=slotgate/valkey:${version}-local
	: >"$manifest"
	# The Debian binary is valkey-check-rdb with valkey-server a symlink;
	# valkey picks its personality from argv[0], so it is stored under the
	# server's name.
	add "$bin" /usr/bin/valkey-server
	add_libs "$(readlink -f "$bin")"
	local hash ctx=$work/valkey
	hash=$(content_hash "$root/images/valkey.Dockerfile" "$0")
	mkdir -p "$ctx"
	if [ "$(docker image inspect --format '{{ index .Config.Labels "slotgate.content" }}' "$tag" 2>/dev/null || true)" != "$hash" ]; then
		stage "$ctx"
		mkdir -p "$ctx/rootfs/data" "$ctx/rootfs/tmp"
		chmod 0777 "$ctx/rootfs/data" # any uid the fixtures run the server as may write
		chmod 1777 "$ctx/rootfs/tmp"
	fi
	build "$tag" "$root/images/valkey.Dockerfile" "$hash" "$ctx"
	echo "SLOTGATE_VALKEY_IMAGE=$tag"
}

build_postgres() {
	local bindir major tag
	bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -n "$bindir" ] && [ -x "$bindir/postgres" ] || {
		echo "images: PostgreSQL server binaries not installed (make deps)" >&2
		exit 2
	}
	major=$(basename "$(dirname "$bindir")")
	tag=slotgate/postgres:${major}-local
	local pgroot=/usr/lib/postgresql/$major
	: >"$manifest"
	add "$bindir/postgres"
	add "$bindir/initdb"
	# initdb runs the bootstrap backend through popen, which needs /bin/sh.
	add /bin/dash /bin/sh
	add "$root/images/postgres-entrypoint.sh" /usr/local/bin/docker-entrypoint.sh
	local so libs=()
	# Extension and encoding-conversion modules (plpgsql and snowball are
	# loaded by initdb); the LLVM JIT and its bitcode are left out (jit=off
	# without them, and they are most of the size).
	for so in "$pgroot"/lib/*.so; do
		case "$(basename "$so")" in llvmjit*) continue ;; esac
		add "$so"
		libs+=("$so")
	done
	add_libs "$bindir/postgres" "$bindir/initdb" /bin/dash "${libs[@]}"
	# The share files (~470) as add would list them, with one readlink for
	# all: a process per file cost a minute on a loaded 2-core machine, on
	# every run of the container tests, even with the image up to date.
	find "/usr/share/postgresql/$major" -type f -print0 | sort -z >"$work/share"
	paste <(xargs -0 readlink -f <"$work/share") <(tr '\0' '\n' <"$work/share") >>"$manifest"
	add /usr/share/zoneinfo/Etc/UTC /usr/share/zoneinfo/Etc/UTC
	add /usr/share/zoneinfo/Etc/UTC /usr/share/zoneinfo/UTC
	add /usr/share/zoneinfo/Etc/GMT /usr/share/zoneinfo/Etc/GMT
	add /usr/share/zoneinfo/Etc/GMT /usr/share/zoneinfo/GMT
	local ctx=$work/postgres hash
	mkdir -p "$ctx/etc"
	printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:PostgreSQL administrator:/var/lib/postgresql:/bin/sh\n' >"$ctx/etc/passwd"
	printf 'root:x:0:\npostgres:x:999:\n' >"$ctx/etc/group"
	add "$ctx/etc/passwd" /etc/passwd
	add "$ctx/etc/group" /etc/group
	hash=$(content_hash "$root/images/postgres.Dockerfile" "$0")
	if [ "$(docker image inspect --format '{{ index .Config.Labels "slotgate.content" }}' "$tag" 2>/dev/null || true)" != "$hash" ]; then
		stage "$ctx"
		mkdir -p "$ctx/rootfs/tmp" "$ctx/state/var/lib/postgresql/data" "$ctx/state/var/run/postgresql"
		chmod 1777 "$ctx/rootfs/tmp"
		chmod 0700 "$ctx/state/var/lib/postgresql/data"
		chmod 2775 "$ctx/state/var/run/postgresql"
	fi
	build "$tag" "$root/images/postgres.Dockerfile" "$hash" "$ctx" "PG_MAJOR=$major"
	echo "SLOTGATE_POSTGRES_IMAGE=$tag"
}

case "$what" in
valkey) build_valkey ;;
postgres) build_postgres ;;
all)
	build_valkey
	build_postgres
	;;
esac
