package dashboard

import (
	"errors"
	"log/slog"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/authlimit"
)

// Defaults of Config's optional fields.
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultMaxAge      = 12 * time.Hour
	// DefaultMaxSessionsPerOperator is a browser per device and then some.
	DefaultMaxSessionsPerOperator = 16
)

// Config is what the dashboard needs: the operator API it is a client of, the limit on
// refused sign-ins, and its session limits.
type Config struct {
	// Operator is an OperatorService client without credentials of its own: each call carries
	// the signed-in operator's credential. Required.
	Operator operatorv1.OperatorServiceClient
	// Failures counts refused sign-ins per remote address (shared with the primary's other
	// doors, so an address has one budget). Required.
	Failures *authlimit.Limiter
	// IdleTimeout ends a session nobody used for this long; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxAge ends a session this long after sign-in, used or not; 0 means DefaultMaxAge.
	MaxAge time.Duration
	// MaxSessionsPerOperator bounds one operator's live sessions: a sign-in beyond it ends
	// that operator's oldest session, never anyone else's. 0 means
	// DefaultMaxSessionsPerOperator.
	MaxSessionsPerOperator int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// Validate reports a missing required field or a negative limit.
func (c Config) Validate() error {
	switch {
	case c.Operator == nil:
		return errors.New("dashboard: Operator is required")
	case c.Failures == nil:
		return errors.New("dashboard: Failures is required")
	case c.IdleTimeout < 0 || c.MaxAge < 0 || c.MaxSessionsPerOperator < 0:
		return errors.New("dashboard: session limits must not be negative")
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxAge == 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MaxSessionsPerOperator == 0 {
		c.MaxSessionsPerOperator = DefaultMaxSessionsPerOperator
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
