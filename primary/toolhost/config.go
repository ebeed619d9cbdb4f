package toolhost

import (
	"errors"
	"log/slog"
	"time"

	"github.com/turncli/turncli/primary/catalog"
)

// Config is what a Service needs.
type Config struct {
	// Registry is the primary's catalog registry. Built-in toolkits must be registered in it
	// before hosts connect: their names are reserved.
	Registry *catalog.Registry
	// LoadTimeout bounds how long a describe or call waits for a host to send a deferred
	// toolkit's definition. Default 30 s.
	LoadTimeout time.Duration
	// SendQueue is how many messages may wait for a host to read them before the host is
	// disconnected as not reading its stream. Default 1024.
	SendQueue int
	Logger    *slog.Logger
}

// Validate checks the configuration and fills defaults.
func (c *Config) Validate() error {
	if c.Registry == nil {
		return errors.New("toolhost: registry is required")
	}
	if c.LoadTimeout <= 0 {
		c.LoadTimeout = 30 * time.Second
	}
	if c.SendQueue <= 0 {
		c.SendQueue = 1024
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
