package matrix

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/turncli/turncli/primary/threadfeed"
)

// Settings are the Matrix surface's section of the primary's configuration. The surface is
// off while Homeserver is empty.
type Settings struct {
	// Homeserver is the base URL of the bot's homeserver, "https://matrix.example.org".
	Homeserver string
	// UserID is the bot's account, "@turncli:example.org", on a fixed device: the homeserver
	// remembers transaction ids per device.
	UserID   string
	DeviceID string
	// AccessTokenFile holds the bot's access token. AccessToken, when set, is the token
	// itself, from the environment (never a flag, so it shows in no process listing).
	AccessTokenFile string
	AccessToken     string
	// CardBytes is how much of an item's text a card shows (a longer one is shortened, and
	// cannot be approved from the card); ChunkBytes the size of a report's messages.
	CardBytes, ChunkBytes int
}

// Defaults of the section: a card short enough to read in a chat client, and report
// messages well under the homeserver's 64 KiB event limit.
const (
	DefaultCardBytes  = 3000
	DefaultChunkBytes = 16 << 10
)

// DefaultSettings returns the section's defaults.
func DefaultSettings() Settings {
	return Settings{CardBytes: DefaultCardBytes, ChunkBytes: DefaultChunkBytes}
}

// On reports whether the surface is configured.
func (s Settings) On() bool { return s.Homeserver != "" }

// BindFlags binds the section to fs, with DefaultSettings (or the environment) as the flags'
// defaults.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	d := DefaultSettings()
	fs.StringVar(&s.Homeserver, "matrix-homeserver", os.Getenv("MINDROOM_MATRIX_HOMESERVER"), "URL of the Matrix homeserver whose threads show cards and take answers; empty turns the Matrix surface off (env MINDROOM_MATRIX_HOMESERVER)")
	fs.StringVar(&s.UserID, "matrix-user", os.Getenv("MINDROOM_MATRIX_USER"), "the Matrix surface's bot account, @name:server (env MINDROOM_MATRIX_USER)")
	fs.StringVar(&s.DeviceID, "matrix-device", os.Getenv("MINDROOM_MATRIX_DEVICE"), "the bot's device id, fixed so the homeserver recognises a resent message (env MINDROOM_MATRIX_DEVICE)")
	fs.StringVar(&s.AccessTokenFile, "matrix-token-file", os.Getenv("MINDROOM_MATRIX_TOKEN_FILE"), "file holding the bot's access token; or give the token in MINDROOM_MATRIX_ACCESS_TOKEN (env MINDROOM_MATRIX_TOKEN_FILE)")
	fs.IntVar(&s.CardBytes, "matrix-card-bytes", d.CardBytes, "how much of an item's text a Matrix card shows; a longer one is shortened and cannot be approved from the card")
	fs.IntVar(&s.ChunkBytes, "matrix-chunk-bytes", d.ChunkBytes, "size of the messages a report is posted in on Matrix")
}

// Validate reports settings that cannot work, reads the access token from its file, and
// fills zero sizes from DefaultSettings.
func (s *Settings) Validate() error {
	if !s.On() {
		return nil
	}
	if u, err := url.Parse(s.Homeserver); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("matrix: the homeserver %q is not an http(s) URL", s.Homeserver)
	}
	if _, _, err := id.UserID(s.UserID).Parse(); err != nil || !strings.HasPrefix(s.UserID, "@") {
		return fmt.Errorf("matrix: the bot account %q is not a Matrix user id such as @turncli:example.org", s.UserID)
	}
	if s.DeviceID == "" {
		return errors.New("matrix: the bot's device id is required (--matrix-device), so resent messages are recognised")
	}
	if s.AccessToken == "" && s.AccessTokenFile != "" {
		data, err := os.ReadFile(s.AccessTokenFile)
		if err != nil {
			return fmt.Errorf("matrix: read the access token: %w", err)
		}
		s.AccessToken = strings.TrimSpace(string(data))
	}
	if s.AccessToken == "" {
		return errors.New("matrix: the bot's access token is required (--matrix-token-file or MINDROOM_MATRIX_ACCESS_TOKEN)")
	}
	*s = s.withDefaults()
	if _, err := s.View(); err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	return nil
}

// withDefaults is s with zero sizes from DefaultSettings.
func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
	if s.CardBytes == 0 {
		s.CardBytes = d.CardBytes
	}
	if s.ChunkBytes == 0 {
		s.ChunkBytes = d.ChunkBytes
	}
	return s
}

// View is how the surface reads the feed.
func (s Settings) View() (threadfeed.View, error) {
	s = s.withDefaults()
	v := threadfeed.View{CardBytes: s.CardBytes, ChunkBytes: s.ChunkBytes}
	return v, v.Check()
}

// Client is the bot's client of the settings.
func (s Settings) Client() (*mautrix.Client, error) {
	cli, err := mautrix.NewClient(s.Homeserver, id.UserID(s.UserID), s.AccessToken)
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	cli.DeviceID = id.DeviceID(s.DeviceID)
	return cli, nil
}
