package interaction

import (
	"github.com/turncli/turncli/internal/secretmask"
	"github.com/turncli/turncli/primary/secrets"
)

// Redacted replaces a secret in the copy of a permission request that people see, the store
// keeps and the logs show.
const Redacted = secretmask.Redacted

// secretKey reports whether a value under key k must be masked.
func secretKey(k string) bool { return secretmask.Key(k) }

// maskSecrets returns the masked copy of a permission request's input (see secretmask.Mask):
// values under secret-bearing keys, and every live secret under any key.
func maskSecrets(v any, live *secrets.Registry) any { return secretmask.MaskWith(v, live.Redact) }
