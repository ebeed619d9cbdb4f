// Package buildinfo says which build of turncli a binary is: the module version, the VCS
// revision and whether the tree was modified, and the Go version, from the build information
// the Go toolchain embeds, or, where the build stamped no VCS information (-buildvcs=false),
// from what the Makefile passed the linker. Every binary's --version and start log line read
// it here. It imports only the standard library, so mindroom-agent may use it too; it does not
// parse flags or print anything itself.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what the toolchain recorded about a build. A field the build did not record (no
// VCS stamping, a test binary) is "unknown", never empty.
type Info struct {
	// Version is the main module's version: a tag or pseudo-version for `go install m@v`,
	// "(devel)" for a build from a checkout.
	Version string
	// Revision is the VCS commit the binary was built from; Modified reports uncommitted
	// changes in that tree.
	Revision string
	Modified bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

const unknown = "unknown"

// linkedVersion and linkedRevision are set by the Makefile's build (go build -ldflags
// "-X …/buildinfo.linkedVersion=…"), from `git describe --tags --always --dirty` and `git rev-parse
// HEAD`; empty in any other build, or where git was absent.
var linkedVersion, linkedRevision string

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: unknown, Revision: unknown, GoVersion: runtime.Version()}.Linked(linkedVersion, linkedRevision)
	}
	return FromBuildInfo(bi).Linked(linkedVersion, linkedRevision)
}

// Linked fills what the toolchain did not record from what the build passed the linker:
// version replaces an unknown or "(devel)" Version, revision an unknown Revision, and a
// version ending in "-dirty" (git describe's mark) says the tree was modified. What the
// toolchain recorded wins: it describes the tree the binary was compiled from.
func (in Info) Linked(version, revision string) Info {
	if version != "" && (in.Version == unknown || in.Version == develVersion) {
		in.Version = version
		in.Modified = in.Modified || strings.HasSuffix(version, "-dirty")
	}
	if revision != "" && in.Revision == unknown {
		in.Revision = revision
	}
	return in
}

// develVersion is the toolchain's version of a main module built from a checkout it could not
// read a version from.
const develVersion = "(devel)"

// FromBuildInfo extracts Info from the toolchain's record of a build.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Version: bi.Main.Version, Revision: unknown, GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	if in.Version == "" {
		in.Version = unknown
	}
	if in.GoVersion == "" {
		in.GoVersion = runtime.Version()
	}
	return in
}

// Line is the one line `program --version` prints, without its newline:
// "mindroom-primary v1.2.0 revision 0123abcd… (modified) go1.26.0".
func (in Info) Line(program string) string {
	var b strings.Builder
	b.WriteString(program)
	b.WriteString(" ")
	b.WriteString(in.Version)
	b.WriteString(" revision ")
	b.WriteString(in.Revision)
	if in.Modified {
		b.WriteString(" (modified)")
	}
	b.WriteString(" ")
	b.WriteString(in.GoVersion)
	return b.String()
}

// LogAttrs are the build's attributes for a log line, as alternating keys and values
// (slog's ...any form), so a process's start line carries them under the same keys
// everywhere.
func (in Info) LogAttrs() []any {
	return []any{"version", in.Version, "revision", in.Revision, "modified", in.Modified, "go_version", in.GoVersion}
}

// IsVersionFlag reports whether arg asks for the version: "--version" or "-version", as the
// flag package spells a boolean flag either way.
func IsVersionFlag(arg string) bool { return arg == "--version" || arg == "-version" }
