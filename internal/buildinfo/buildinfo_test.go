package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"TaggedCleanBuildNamesTagAndRevision", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "false"}}},
			"mindroom-worker v1.2.0 revision 0123abcd go1.26.0"},
		{"ModifiedTreeIsMarked", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}},
			"mindroom-worker (devel) revision 0123abcd (modified) go1.26.0"},
		{"BuildWithoutVCSStampSaysUnknown", debug.BuildInfo{GoVersion: "go1.26.0"},
			"mindroom-worker unknown revision unknown go1.26.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromBuildInfo(&tc.bi).Line("mindroom-worker"); got != tc.want {
				t.Fatalf("Line = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadNamesTheRunningToolchain(t *testing.T) {
	in := Read()
	if !strings.HasPrefix(in.GoVersion, "go") || in.Version == "" || in.Revision == "" {
		t.Fatalf("Read() = %+v", in)
	}
	attrs := in.LogAttrs()
	if len(attrs) != 8 || attrs[0] != "version" || attrs[6] != "go_version" {
		t.Fatalf("LogAttrs() = %v", attrs)
	}
}

func TestLinkedFillsOnlyWhatTheToolchainDidNotRecord(t *testing.T) {
	vcs := debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "false"}}}
	noVCS := debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}
	for _, tc := range []struct {
		name              string
		bi                debug.BuildInfo
		version, revision string
		want              string
	}{
		{"TheToolchainsRecordWins", vcs, "v9.9.9-dirty", "ffff",
			"mindroom-primary v1.2.0 revision 0123abcd go1.26.0"},
		{"WithoutVCSTheLinkersStampIsUsed", noVCS, "v1.3.0-4-g89ab", "89abcdef",
			"mindroom-primary v1.3.0-4-g89ab revision 89abcdef go1.26.0"},
		{"ADirtyDescribeMarksTheTreeModified", noVCS, "89ab-dirty", "89abcdef",
			"mindroom-primary 89ab-dirty revision 89abcdef (modified) go1.26.0"},
		{"WithoutGitNothingIsStamped", noVCS, "", "",
			"mindroom-primary (devel) revision unknown go1.26.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromBuildInfo(&tc.bi).Linked(tc.version, tc.revision).Line("mindroom-primary"); got != tc.want {
				t.Fatalf("Line = %q, want %q", got, tc.want)
			}
		})
	}
}
