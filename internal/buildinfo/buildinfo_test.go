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
