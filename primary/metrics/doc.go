// Package metrics is the primary's metrics home: its Prometheus registry, the observers the
// engines report to (calls settling, Agent CLI operations, store transactions), and the
// collectors that read the engines' counts and the store's pending records when Prometheus
// scrapes. The transport series (gRPC, HTTP) come from internal/metrics, shared with the
// worker.
//
// Engines never import prometheus: they expose counts and snapshots (response.Stats,
// workerhub.KeyStats, …) or accept a small observer interface, and this package turns them
// into series. No label carries an id or another value a caller chooses: kinds, outcomes,
// statuses, worker keys and MCP server names are all from bounded, configured sets.
package metrics
