package mountview

import (
	"reflect"
	"testing"
)

func TestAViewTravelsInArgumentsUnchanged(t *testing.T) {
	v := View{Hide: []string{"/var/lib/turncli", "/srv/ws"}, Workspace: "/srv/ws/a", ReadOnly: []string{"/var/lib/turncli/agent_cli_bin", "/usr/local/bin/mindroom-agent"}, TmpBytes: 1 << 20}
	got, rest, err := ParseArgs(append(v.Args(), "0", "1", "/bin/bash"))
	if err != nil || !reflect.DeepEqual(got, v) || !reflect.DeepEqual(rest, []string{"0", "1", "/bin/bash"}) {
		t.Fatalf("ParseArgs(Args()) = %+v, %q, %v", got, rest, err)
	}
}

func TestAViewMayNotHideTheSystemNorNameRelativePaths(t *testing.T) {
	for name, v := range map[string]View{
		"HidesTheRoot":     {Hide: []string{"/"}},
		"HidesUsr":         {Hide: []string{"/usr"}},
		"RelativeHide":     {Hide: []string{"state"}},
		"UncleanWorkspace": {Workspace: "/srv/ws/../etc"},
		"RelativeReadOnly": {ReadOnly: []string{"bin/x"}},
	} {
		if err := v.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := (View{Hide: []string{"/usr/local/state"}}).Validate(); err != nil {
		t.Errorf("a directory below /usr: %v", err)
	}
}

func TestBadArgumentsAreRefused(t *testing.T) {
	for _, args := range [][]string{{"--hide"}, {"--tmp-bytes", "-1", "--"}, {"--what", "x", "--"}, {"--hide", "/x"}} {
		if _, _, err := ParseArgs(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
