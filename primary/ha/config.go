package ha

import (
	"errors"
	"flag"
	"os"
	"time"

	"github.com/turncli/turncli/primary/leader"
)

// Config is the active/standby section of the primary's configuration.
type Config struct {
	// Enabled makes this primary one of several sharing a PostgreSQL store: it serves only
	// while it holds the leader lease, stands by until then, and stops (Run fails) when it
	// loses the lease. See package leader.
	Enabled bool
	// AdvertiseAddr is the gRPC address the other primaries name to clients while this one
	// leads (default: the gRPC listener's address).
	AdvertiseAddr string
	// LeaseTTL and LeaseRenew time the leader lease (zero: leader.DefaultTTL and
	// leader.DefaultRenew).
	LeaseTTL   time.Duration
	LeaseRenew time.Duration
}

// Defaults returns the section's defaults.
func Defaults() Config {
	return Config{LeaseTTL: leader.DefaultTTL, LeaseRenew: leader.DefaultRenew}
}

// Validate fills zero fields from Defaults and reports settings that cannot work.
func (c *Config) Validate() error {
	d := Defaults()
	if c.LeaseTTL == 0 {
		c.LeaseTTL = d.LeaseTTL
	}
	if c.LeaseRenew == 0 {
		c.LeaseRenew = d.LeaseRenew
	}
	if c.LeaseTTL < 0 || c.LeaseRenew < 0 {
		return errors.New("lease TTL and renewal cannot be negative")
	}
	return nil
}

// BindFlags binds the section to fs, with Defaults as the flags' defaults.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	d := Defaults()
	fs.BoolVar(&c.Enabled, "active-standby", os.Getenv("MINDROOM_ACTIVE_STANDBY") == "1", "one of several primaries on one PostgreSQL store: serve only while holding the leader lease, stand by otherwise, exit when the lease is lost (env MINDROOM_ACTIVE_STANDBY=1)")
	fs.StringVar(&c.AdvertiseAddr, "advertise-addr", os.Getenv("MINDROOM_ADVERTISE_ADDR"), "gRPC address standbys name to clients while this primary leads (default: --grpc-listen's address) (env MINDROOM_ADVERTISE_ADDR)")
	fs.DurationVar(&c.LeaseTTL, "lease-ttl", d.LeaseTTL, "how long the leader lease lasts unrenewed; a standby takes over this long after the leader stopped")
	fs.DurationVar(&c.LeaseRenew, "lease-renew", d.LeaseRenew, "how often the leader renews its lease and a standby tries to take it")
}
