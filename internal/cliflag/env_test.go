package cliflag

import (
	"flag"
	"slices"
	"testing"
)

func TestListFlag(t *testing.T) {
	names := []string{"HOME"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Var(List{&names}, "allow", "")
	if got := fs.Lookup("allow").DefValue; got != "HOME" {
		t.Fatalf("default %q", got)
	}
	if err := fs.Parse([]string{"--allow", " LANG, ,TZ "}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"LANG", "TZ"}) {
		t.Fatalf("names %q", names)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("CLIFLAG_TEST_SET", "from-env")
	t.Setenv("CLIFLAG_TEST_EMPTY", "")
	if got := Env("CLIFLAG_TEST_SET", "fallback"); got != "from-env" {
		t.Errorf("set: %q", got)
	}
	if got := Env("CLIFLAG_TEST_EMPTY", "fallback"); got != "fallback" {
		t.Errorf("empty: %q", got)
	}
}
