package bashexec

import (
	"os"
	"testing"
)

// BenchmarkRunTrue measures one command from start to delivered result. Run it with and
// without TURNCLI_NO_CGROUPS=1 to see what the cgroup leaf costs.
func BenchmarkRunTrue(b *testing.B) {
	spec := Spec{Script: "true", Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: b.TempDir()}
	for b.Loop() {
		if _, err := Run(b.Context(), spec, nil); err != nil {
			b.Fatal(err)
		}
	}
}
