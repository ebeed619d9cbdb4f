package mcp

import (
	"maps"
	"slices"
)

// This file decides which MCP revision each request speaks, and answers the methods that
// belong to a revision's lifecycle: initialize, ping and server/discover. One server serves two
// eras at once:
//
//   - the handshake era (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05): initialize chooses a
//     revision, and every later request without a revision of its own speaks it;
//   - the stateless era (2026-07-28, SEP-2575): each request names its revision and the
//     client's capabilities in _meta, needs no initialize, and depends on no earlier request;
//     server/discover tells what is served, results carry "resultType", and initialize and
//     ping no longer exist.
//
// The era is a property of the request, never of the process, so a client may mix them.

// statelessVersion is the stateless revision served.
const statelessVersion = "2026-07-28"

// mcpProtocolVersions are the handshake revisions served, newest first. For a tools-only
// server without listChanged they differ only in optional fields: title and
// structuredContent (2025-06-18), and the progress message and tool annotations (2025-03-26)
// are sent only to clients that know them. initialize never chooses statelessVersion, as that
// revision has no handshake.
var mcpProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// supportedVersions is every revision served, newest first, as server/discover and an
// unsupported-version error list them.
func supportedVersions() []any {
	out := []any{statelessVersion}
	for _, v := range mcpProtocolVersions {
		out = append(out, v)
	}
	return out
}

// The _meta keys of the stateless era (SEP-2575).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// revisionOf tells which revision request m speaks. A request whose _meta names
// statelessVersion is stateless and must declare the client's capabilities there; one that
// names no revision, or a handshake revision (the key means nothing before 2026-07-28),
// speaks the revision initialize chose, or the newest handshake revision before initialize.
// Any other revision is refused with -32022 and the revisions served.
func (s *mcpServer) revisionOf(m rpcMessage) (version string, stateless bool, rerr *rpcError) {
	meta, _ := m.params["_meta"].(map[string]any)
	named, present := meta[metaProtocolVersion]
	requested, isString := named.(string)
	switch {
	case !present || (isString && slices.Contains(mcpProtocolVersions, requested)):
		return s.handshakeVersion(), false, nil
	case !isString:
		return "", false, invalidParams(`_meta "` + metaProtocolVersion + `" must be a string`)
	case requested != statelessVersion:
		return "", false, &rpcError{code: codeUnsupportedVersion, message: "Unsupported protocol version: " + requested,
			data: map[string]any{"supported": supportedVersions(), "requested": requested}}
	}
	if _, ok := meta[metaClientCapabilities].(map[string]any); !ok {
		return "", false, invalidParams(`a request of MCP ` + statelessVersion + ` needs _meta "` + metaClientCapabilities + `", an object`)
	}
	if info, present := meta[metaClientInfo]; present {
		if _, ok := info.(map[string]any); !ok {
			return "", false, invalidParams(`_meta "` + metaClientInfo + `" must be an object`)
		}
	}
	return statelessVersion, true, nil
}

// handshakeVersion returns the revision initialize chose, or the newest before initialize.
func (s *mcpServer) handshakeVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version == "" {
		return mcpProtocolVersions[0]
	}
	return s.version
}

// localMethod answers the methods that need no Agent CLI request.
func (s *mcpServer) localMethod(m rpcMessage) (any, *rpcError) {
	switch {
	case m.method == "initialize" && !m.stateless:
		return s.initialize(m.params)
	case m.method == "ping" && !m.stateless:
		return map[string]any{}, nil
	case m.method == "server/discover" && m.stateless:
		return discover(), nil
	case m.method == "initialize" || m.method == "ping":
		return nil, &rpcError{code: codeMethodNotFound, message: "Method not found: " + m.method + " is not part of MCP " + statelessVersion}
	case m.method == "server/discover":
		return nil, &rpcError{code: codeMethodNotFound, message: "Method not found: server/discover is MCP " + statelessVersion +
			` and needs _meta "` + metaProtocolVersion + `":"` + statelessVersion + `"`}
	}
	return nil, &rpcError{code: codeMethodNotFound, message: "Method not found: " + m.method}
}

// initialize negotiates a handshake revision: the client's when it is served, else the newest
// (so a client asking for 2026-07-28 is answered with 2025-11-25, as that revision has no
// handshake; a client of both eras sends server/discover first).
func (s *mcpServer) initialize(params map[string]any) (any, *rpcError) {
	requested, ok := params["protocolVersion"].(string)
	if !ok {
		return nil, invalidParams(`initialize needs "protocolVersion", a string`)
	}
	version := mcpProtocolVersions[0]
	if slices.Contains(mcpProtocolVersions, requested) {
		version = requested
	}
	s.mu.Lock()
	s.version = version
	s.mu.Unlock()
	caps := serverCapabilities()
	if version == coreTasksVersion { // tasks of tools/call, neither listed nor cancelled (tasks.go)
		caps["tasks"] = map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    caps,
		"serverInfo":      serverInfo(version),
		"instructions":    mcpInstructions,
	}, nil
}

// discover answers server/discover. Its capabilities add the Tasks extension (tasks.go),
// which exists only in the stateless era.
func discover() map[string]any {
	caps := serverCapabilities()
	caps["extensions"] = map[string]any{tasksExtension: map[string]any{}}
	return map[string]any{
		"supportedVersions": supportedVersions(),
		"capabilities":      caps,
		"serverInfo":        serverInfo(statelessVersion),
		"instructions":      mcpInstructions,
	}
}

// serverCapabilities are what every revision declares: tools, whose list never announces
// changes. initialize of 2025-11-25 adds its tasks and server/discover the Tasks extension.
func serverCapabilities() map[string]any {
	return map[string]any{"tools": map[string]any{"listChanged": false}}
}

func serverInfo(version string) map[string]any {
	info := map[string]any{"name": mcpServerName, "version": mcpServerVersion}
	if version >= "2025-06-18" {
		info["title"] = "MindRoom Agent CLI"
	}
	return info
}

// statelessResult is res as the stateless era answers it: "resultType":"complete" (this
// server never asks the client for input in the middle of a request) unless res set its own
// ("task", for a task created in lieu of a result), and the server's identity in _meta, where
// SEP-2575 clients such as the official Go SDK read it.
func statelessResult(res any) any {
	obj, ok := res.(map[string]any)
	if !ok {
		return res
	}
	out := maps.Clone(obj)
	if _, set := out["resultType"]; !set {
		out["resultType"] = "complete"
	}
	meta, _ := obj["_meta"].(map[string]any)
	meta = maps.Clone(meta)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[metaServerInfo] = serverInfo(statelessVersion)
	out["_meta"] = meta
	return out
}
