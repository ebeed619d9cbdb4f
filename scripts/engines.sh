#!/usr/bin/env bash
# engines.sh prints the directory where the real engine CLIs the engine tests run are installed
# from npm (internal/enginetest reads it from TURNCLI_ENGINES_DIR and runs
# <dir>/node_modules/.bin/claude and codex), installing them first when the cache lacks them.
#
# The CLIs run as the agents' shell user, who may not reach into the installing user's home
# (root's is 0700), so the cache is /var/cache/turncli/engines-<claude>-<codex>/ when this user
# can write there, ${XDG_CACHE_HOME:-$HOME/.cache}/turncli/… otherwise, and readable by all.
# Install output goes to stderr; stdout is only the path.
set -euo pipefail

# The versions the tests were written against; new ones are a new cache directory.
claude=2.1.328
codex=0.169.0
cache=/var/cache/turncli
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/turncli
fi
dir=$cache/engines-$claude-$codex

if [ ! -x "$dir/node_modules/.bin/claude" ] || [ ! -x "$dir/node_modules/.bin/codex" ]; then
	mkdir -p "$(dirname "$dir")"
	# Installed beside the cache and renamed into it, so an interrupted install leaves nothing a
	# later run would take for a finished one.
	tmp=$(mktemp -d "$dir.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "engines.sh: installing @anthropic-ai/claude-code@$claude and @openai/codex@$codex into $dir" >&2
	npm install --prefix "$tmp" --no-audit --no-fund --no-save \
		"@anthropic-ai/claude-code@$claude" "@openai/codex@$codex" >&2
	chmod -R a+rX "$tmp"
	chmod 755 "$cache"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	trap - EXIT
fi
echo "$dir"
