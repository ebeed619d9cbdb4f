// Package deploy holds the Kubernetes manifests of turncli (a kustomize base and its
// overlays) and the container images' Dockerfiles. It has no code to run: its tests render
// every overlay with kustomize as a library, decode each object strictly into the Kubernetes
// API types, and hold the result to the rules a deployment must keep (security contexts,
// probes, requests, references that resolve, the workers' network) without a cluster.
package deploy
