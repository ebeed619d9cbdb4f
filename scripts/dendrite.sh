#!/usr/bin/env bash
# dendrite.sh prints the path of the Dendrite homeserver binary the Matrix tests run
# (internal/matrixtest reads it from TURNCLI_DENDRITE), building it first when the cache lacks it.
# The build takes minutes from a cold Go cache, so it lives outside `make test`: CI runs this
# once and a second run on the same machine finds the binary in the cache.
#
# The cache is ${XDG_CACHE_HOME:-$HOME/.cache}/turncli/dendrite-<version>/. Build output goes to
# stderr; stdout is only the path.
set -euo pipefail

# The version the tests were written against; a new one is a new cache directory.
version=v0.13.8
dir=${XDG_CACHE_HOME:-$HOME/.cache}/turncli/dendrite-$version
bin=$dir/dendrite

if [ ! -x "$bin" ]; then
	mkdir -p "$dir"
	# Built beside the cache and renamed into it, so an interrupted build leaves no binary that
	# a later run would take for a finished one.
	tmp=$(mktemp -d "$dir/build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "dendrite.sh: building Dendrite $version into $dir (minutes from a cold Go cache)" >&2
	# Outside any module, so this checkout's go.mod and GOFLAGS play no part. cgo links
	# Dendrite's SQLite driver (mattn/go-sqlite3); without a C compiler Dendrite would fall back
	# to a pure-Go driver the tests were not written against.
	(cd "$tmp" && GOFLAGS=-mod=mod CGO_ENABLED=1 GOBIN="$tmp" \
		go install "github.com/matrix-org/dendrite/cmd/dendrite@$version") >&2
	mv "$tmp/dendrite" "$bin"
fi
echo "$bin"
