package cliflag

import (
	"os"
	"strings"
)

// Env is the value of the environment variable name, or fallback when it is unset or empty: a
// flag's default with an environment fallback.
func Env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// EnvOn says whether the environment variable name is "1", a boolean flag's environment
// fallback.
func EnvOn(name string) bool { return os.Getenv(name) == "1" }

// List is a flag.Value of comma-separated names: spaces around each are trimmed and empty
// ones dropped. Setting it replaces the list.
type List struct{ Names *[]string }

// String joins the names with commas.
func (l List) String() string {
	if l.Names == nil {
		return ""
	}
	return strings.Join(*l.Names, ",")
}

// Set replaces the list with the names of s.
func (l List) Set(s string) error {
	*l.Names = SplitList(s)
	return nil
}

// SplitList is the names of a comma-separated list, trimmed, empty ones dropped.
func SplitList(s string) []string {
	var out []string
	for _, name := range strings.Split(s, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}
