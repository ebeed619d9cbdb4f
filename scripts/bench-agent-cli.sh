#!/usr/bin/env bash
# bench-agent-cli.sh measures one `mindroom-agent tools call test.echo '{}'` as a whole process
# against a primary-local listener, and the floor (internal/benchfloor/floorclient: the same two loopback
# requests from a minimal standard-library program to a trivial server). It prints the machine,
# every run, the median of the per-run medians of each benchmark and their ratio.
# See docs/PERFORMANCE.md for how to read the numbers.
#
# RUNS (default 5) test-binary runs, each running the three benchmarks once with BENCHTIME
# (default 200x) processes, so that load from elsewhere falls on both alike.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
benchtime=${BENCHTIME:-200x}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go test -c -o "$tmp/e2e.test" ./primary/e2e/

echo "command: RUNS=$runs BENCHTIME=$benchtime scripts/bench-agent-cli.sh"
echo "nproc:   $(nproc)"
echo "go:      $(go version)"
echo "cpu:     $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (before)"
for _ in $(seq "$runs"); do
	# The test binary runs in its package directory, as go test would run it.
	(cd primary/e2e && "$tmp/e2e.test" -test.run '^$' -test.bench . -test.benchtime "$benchtime") |
		grep '^Benchmark' | tee -a "$tmp/runs"
done
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (after)"

# median NAME prints the median of NAME's median-ns/op values, in ms.
median() {
	awk -v name="$1" '$1 ~ "^"name"(-[0-9]+)?$" {
		for (i = 2; i < NF; i++) if ($(i+1) == "median-ns/op") print $i
	}' "$tmp/runs" | sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) exit 1
		m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		printf "%.2f\n", m / 1e6
	}'
}
agent=$(median BenchmarkToolsCallEcho)
client=$(median BenchmarkToolsCallEchoTrivialServer)
floor=$(median BenchmarkFloorTwoRequests)
ratio() { awk -v a="$1" -v f="$2" 'BEGIN { printf "%.2f\n", a / f }'; }
echo "median, mindroom-agent against the primary:        ${agent} ms ($(ratio "$agent" "$floor") x floor)"
echo "median, mindroom-agent against the trivial server: ${client} ms ($(ratio "$client" "$floor") x floor)"
echo "median, floor (floorclient, trivial server):       ${floor} ms"
