#!/usr/bin/env bash
# engines.sh prints the directory where the real engine CLIs the engine tests run are installed
# from npm (internal/enginetest reads it from TURNCLI_ENGINES_DIR and runs
# <dir>/node_modules/.bin/claude and codex), installing them first when the cache lacks them.
#
# The cache is ${XDG_CACHE_HOME:-$HOME/.cache}/turncli/engines-<claude>-<codex>/. Install output
# goes to stderr; stdout is only the path.
set -euo pipefail

# The versions the tests were written against; new ones are a new cache directory.
claude=2.1.328
codex=0.169.0
dir=${XDG_CACHE_HOME:-$HOME/.cache}/turncli/engines-$claude-$codex

if [ ! -x "$dir/node_modules/.bin/claude" ] || [ ! -x "$dir/node_modules/.bin/codex" ]; then
	mkdir -p "$(dirname "$dir")"
	# Installed beside the cache and renamed into it, so an interrupted install leaves nothing a
	# later run would take for a finished one.
	tmp=$(mktemp -d "$dir.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "engines.sh: installing @anthropic-ai/claude-code@$claude and @openai/codex@$codex into $dir" >&2
	npm install --prefix "$tmp" --no-audit --no-fund --no-save \
		"@anthropic-ai/claude-code@$claude" "@openai/codex@$codex" >&2
	rm -rf "$dir"
	mv "$tmp" "$dir"
	trap - EXIT
fi
echo "$dir"
