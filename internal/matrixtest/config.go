package matrixtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// ServerName is the homeserver's name: every user id ends in ":" + ServerName.
const ServerName = "localhost"

// sharedSecret signs shared-secret registrations; the server listens only on loopback and
// lives for one test, so a constant is enough.
const sharedSecret = "turncli-matrixtest-shared-secret"

// Names of the files in a server's directory.
const (
	configFile = "dendrite.yaml"
	keyFile    = "matrix_key.pem"
	logFile    = "dendrite.log"
)

// prepareDir writes the signing key and the config into dir unless the config is there
// already, so a server started again on the same directory keeps its key and its data.
func prepareDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, configFile)); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := writeKey(filepath.Join(dir, keyFile)); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, configFile), []byte(config(dir)), 0o600)
}

// writeKey writes a new ed25519 signing key in the PEM form Dendrite reads: the 32-byte seed
// under a Key-ID header. Writing it here spares the harness Dendrite's generate-keys binary.
func writeKey(path string) error {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return err
	}
	block := &pem.Block{Type: "MATRIX PRIVATE KEY", Headers: map[string]string{"Key-ID": "ed25519:matrixtest"}, Bytes: seed}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
}

// config is Dendrite's configuration for a test server whose files are all under dir. On
// SQLite every component names its own database (the global one is for PostgreSQL only).
// JetStream keeps its streams on disk, so a restarted server's sync resumes where it was.
// bcrypt at its lowest cost keeps logins fast.
func config(dir string) string {
	path := func(name string) string { return strconv.Quote(filepath.Join(dir, name)) }
	db := func(name string) string { return strconv.Quote("file:" + filepath.Join(dir, name+".db")) }
	return fmt.Sprintf(`version: 2
global:
  server_name: %s
  private_key: %s
  disable_federation: true
  trusted_third_party_id_servers: []
  jetstream:
    in_memory: false
    storage_path: %s
  report_stats:
    enabled: false
client_api:
  registration_disabled: true
  guests_disabled: true
  registration_shared_secret: %s
  rate_limiting:
    enabled: false
federation_api:
  database:
    connection_string: %s
  key_perspectives: []
key_server:
  database:
    connection_string: %s
media_api:
  base_path: %s
  database:
    connection_string: %s
mscs:
  database:
    connection_string: %s
relay_api:
  database:
    connection_string: %s
room_server:
  database:
    connection_string: %s
sync_api:
  database:
    connection_string: %s
  search:
    enabled: false
user_api:
  bcrypt_cost: 4
  account_database:
    connection_string: %s
logging:
  - type: std
    level: warn
`, strconv.Quote(ServerName), path(keyFile), path("jetstream"), strconv.Quote(sharedSecret),
		db("federationapi"), db("keyserver"), path("media"), db("mediaapi"), db("mscs"),
		db("relayapi"), db("roomserver"), db("syncapi"), db("userapi"))
}
