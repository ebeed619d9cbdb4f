package interaction

import "github.com/turncli/turncli/internal/secretmask"

// Redacted replaces a secret in the copy of a permission request that people see, the store
// keeps and the logs show.
const Redacted = secretmask.Redacted

// secretKey reports whether a value under key k must be masked.
func secretKey(k string) bool { return secretmask.Key(k) }

// maskSecrets returns the masked copy of a permission request's input (see secretmask.Mask).
func maskSecrets(v any, known []string) any { return secretmask.Mask(v, known) }
