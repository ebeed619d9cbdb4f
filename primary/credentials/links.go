package credentials

import (
	"path/filepath"

	"github.com/turncli/turncli/primary/secrets"
)

// LinksKey returns the key that signs decision links, kept in <stateDir>/credentials/links.key
// (created on first start, like the runtime credential). Links minted before a restart stay
// valid because the key outlives the process; deleting the file voids them all. The key
// becomes a live secret of live.
func LinksKey(stateDir string, live *secrets.Registry) ([]byte, error) {
	key, _, err := LoadOrCreate(filepath.Join(stateDir, "credentials", "links.key"))
	if err != nil {
		return nil, err
	}
	live.Add(key)
	return []byte(key), nil
}
