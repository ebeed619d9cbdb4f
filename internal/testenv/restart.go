package testenv

import "github.com/turncli/turncli/primary"

// WithStateDir runs the primary on dir instead of a fresh temporary directory, so a test can
// stop one primary (Start inside a subtest stops it when the subtest ends) and start another on
// the same state: the same store and the same runtime credential, as after a restart. Env.StateDir
// still names the directory Start would have used; use dir.
func WithStateDir(dir string) Option {
	return WithConfig(func(c *primary.Config) { c.StateDir = dir })
}
