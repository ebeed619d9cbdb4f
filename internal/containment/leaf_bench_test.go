package containment

import "testing"

// BenchmarkCommandLeaf is what containment adds to every command beyond starting its
// process: creating the leaf, and emptying and removing it afterwards.
func BenchmarkCommandLeaf(b *testing.B) {
	if err := Available(); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		l, err := NewCommand()
		if err != nil {
			b.Fatal(err)
		}
		l.Started()
		if err := l.Kill(); err != nil {
			b.Fatal(err)
		}
		if err := l.Remove(); err != nil {
			b.Fatal(err)
		}
	}
}
