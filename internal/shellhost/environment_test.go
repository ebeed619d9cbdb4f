package shellhost

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/shellpriv"
)

func TestAShellSwitchedToItsOwnUserIsNotToldItIsThePrimarysUser(t *testing.T) {
	inherited := map[string]string{"HOME": "/root", "USER": "root", "LOGNAME": "root", "LANG": "C.UTF-8"}
	for _, tc := range []struct {
		name      string
		user      *shellpriv.User
		inherited map[string]string
		want      map[string]string
	}{
		{"WithoutASwitchNothingChanges", nil, inherited, inherited},
		{"HomeIsTheWorkspaceAndTheNamesTheShellUsers", &shellpriv.User{Uid: 65534, Gid: 65534, Name: "nobody"}, inherited,
			map[string]string{"HOME": "/ws", "USER": "nobody", "LOGNAME": "nobody", "LANG": "C.UTF-8"}},
		{"AnUnnamedUserHasNoName", &shellpriv.User{Uid: 4242, Gid: 4242}, inherited,
			map[string]string{"HOME": "/ws", "LANG": "C.UTF-8"}},
		{"WhatWasNotInheritedIsNotAdded", &shellpriv.User{Uid: 65534, Gid: 65534, Name: "nobody"}, map[string]string{"LANG": "C"},
			map[string]string{"LANG": "C"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := maps.Clone(tc.inherited)
			asShellUser(vars, tc.user, "/ws")
			if !maps.Equal(vars, tc.want) {
				t.Errorf("environment %v, want %v", vars, tc.want)
			}
		})
	}
}

func TestCommandsAreRefusedUnderTheDiskReserve(t *testing.T) {
	state := t.TempDir()
	r := &Runner{cfg: Config{StateDir: state, Sandboxing: &Isolation{DiskReserve: 1 << 60}}}
	err := r.CheckDisk()
	if !errors.Is(err, ErrDiskReserve) || !strings.Contains(err.Error(), "under the reserve of 1099511627776 MiB") {
		t.Fatalf("CheckDisk with a reserve above the disk: %v", err)
	}
	r.cfg.Sandboxing.DiskReserve = 1 << 20
	if err := r.CheckDisk(); err != nil {
		t.Fatalf("CheckDisk with a 1 MiB reserve: %v", err)
	}
}

func TestAWorkspaceIsOnePathElement(t *testing.T) {
	r := &Runner{cfg: Config{StateDir: t.TempDir()}}
	for _, agent := range []string{"", ".", "..", "a/b", "../x", "a\x00"} {
		if dir, err := r.Workspace(agent); err == nil {
			t.Errorf("Workspace(%q) = %s", agent, dir)
		}
	}
	if _, err := r.Workspace("a..b"); err != nil {
		t.Errorf("Workspace(a..b): %v", err)
	}
}

func TestSizesReadAsBytesOrPowersOf1024(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "1K": 1 << 10, "64MiB": 64 << 20, "2GiB": 2 << 30, "1T": 1 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5G", "2GB", "4194305TiB", "x"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, accepted", in, got)
		}
	}
}
