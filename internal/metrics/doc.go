// Package metrics is the Prometheus instrumentation every turncli daemon shares: a registry per
// process (with the Go and process collectors, never the global default registry), the
// /metrics handler, and the request series of gRPC servers and clients and of HTTP servers,
// labelled by service and method, or by route pattern, never by anything a caller chooses
// freely (no ids, no raw paths).
//
// It owns only these transport series. What a process counts about its own state (responses,
// jobs, workers) is collected by that process's metrics home (primary/metrics, the worker),
// reading the engines at scrape time; engines never import this package or prometheus.
//
// The hot path stays cheap: label children are resolved once per method, route and code and
// cached, so an instrumented request costs a map lookup under a read lock and an atomic add.
package metrics
