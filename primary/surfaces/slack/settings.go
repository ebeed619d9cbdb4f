package slack

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	goslack "github.com/slack-go/slack"

	"github.com/turncli/turncli/primary/threadfeed"
)

// Settings are the Slack surface's section of the primary's configuration. The surface is off
// while no bot token is given.
type Settings struct {
	// BotTokenFile holds the Slack app's bot token (xoxb-…); BotToken, when set, is the token
	// itself, from the environment (never a flag, so it shows in no process listing).
	BotTokenFile string
	BotToken     string
	// SigningSecretFile holds the app's signing secret, which signs the interactivity requests
	// Slack sends to InteractionsPath on the REST listener; SigningSecret likewise.
	SigningSecretFile string
	SigningSecret     string
	// APIURL is the Slack Web API's base URL (a test server's in tests).
	APIURL string
	// CardBytes is how much of an item's text a card shows (a longer one is shortened, and
	// cannot be approved from the card); ChunkBytes the size of a report's messages.
	CardBytes, ChunkBytes int
	// Queue bounds the answers waiting to be decided; past it people are asked to try again.
	Queue int
}

// InteractionsPath is where the REST listener takes Slack's interactivity requests: the Slack
// app's Request URL is the listener's public origin followed by it.
const InteractionsPath = "/v1/surfaces/slack/interactions"

// Defaults of the section: a card's text within one Block Kit section (3000 characters),
// report messages of one section each.
const (
	DefaultAPIURL     = "https://slack.com/api/"
	DefaultCardBytes  = 2800
	DefaultChunkBytes = 2800
	DefaultQueue      = 256
)

// DefaultSettings returns the section's defaults.
func DefaultSettings() Settings {
	return Settings{APIURL: DefaultAPIURL, CardBytes: DefaultCardBytes, ChunkBytes: DefaultChunkBytes, Queue: DefaultQueue}
}

// On reports whether the surface is configured.
func (s Settings) On() bool { return s.BotToken != "" || s.BotTokenFile != "" }

// BindFlags binds the section to fs, with DefaultSettings (or the environment) as the flags'
// defaults.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	d := DefaultSettings()
	fs.StringVar(&s.BotTokenFile, "slack-token-file", os.Getenv("MINDROOM_SLACK_TOKEN_FILE"), "file holding the Slack app's bot token, which turns the Slack surface on; or give the token in MINDROOM_SLACK_BOT_TOKEN (env MINDROOM_SLACK_TOKEN_FILE)")
	fs.StringVar(&s.SigningSecretFile, "slack-signing-secret-file", os.Getenv("MINDROOM_SLACK_SIGNING_SECRET_FILE"), "file holding the Slack app's signing secret; or give it in MINDROOM_SLACK_SIGNING_SECRET (env MINDROOM_SLACK_SIGNING_SECRET_FILE)")
	fs.StringVar(&s.APIURL, "slack-api-url", d.APIURL, "base URL of the Slack Web API")
	fs.IntVar(&s.CardBytes, "slack-card-bytes", d.CardBytes, "how much of an item's text a Slack card shows; a longer one is shortened and cannot be approved from the card")
	fs.IntVar(&s.ChunkBytes, "slack-chunk-bytes", d.ChunkBytes, "size of the messages a report is posted in on Slack")
	fs.IntVar(&s.Queue, "slack-queue", d.Queue, "answers from Slack waiting to be decided; past it people are asked to try again")
}

// Validate reports settings that cannot work, reads the credentials from their files, and
// fills zero fields from DefaultSettings.
func (s *Settings) Validate() error {
	if !s.On() {
		return nil
	}
	var err error
	if s.BotToken, err = secret(s.BotToken, s.BotTokenFile, "bot token"); err != nil {
		return err
	}
	if s.SigningSecret, err = secret(s.SigningSecret, s.SigningSecretFile, "signing secret"); err != nil {
		return err
	}
	if s.SigningSecret == "" {
		return errors.New("slack: the signing secret is required (--slack-signing-secret-file or MINDROOM_SLACK_SIGNING_SECRET): without it no answer can be trusted")
	}
	*s = s.withDefaults()
	if u, err := url.Parse(s.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || !strings.HasSuffix(u.Path, "/") {
		return fmt.Errorf("slack: the API URL %q is not an http(s) URL ending in /", s.APIURL)
	}
	if s.Queue < 1 {
		return fmt.Errorf("slack: the answer queue must hold at least 1, not %d", s.Queue)
	}
	if _, err := s.View(); err != nil {
		return fmt.Errorf("slack: %w", err)
	}
	return nil
}

// secret is a credential given itself or read from its file.
func secret(given, file, what string) (string, error) {
	if given != "" || file == "" {
		return given, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("slack: read the %s: %w", what, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// withDefaults is s with zero fields from DefaultSettings.
func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
	if s.APIURL == "" {
		s.APIURL = d.APIURL
	}
	if s.CardBytes == 0 {
		s.CardBytes = d.CardBytes
	}
	if s.ChunkBytes == 0 {
		s.ChunkBytes = d.ChunkBytes
	}
	if s.Queue == 0 {
		s.Queue = d.Queue
	}
	return s
}

// View is how the surface reads the feed.
func (s Settings) View() (threadfeed.View, error) {
	s = s.withDefaults()
	v := threadfeed.View{CardBytes: s.CardBytes, ChunkBytes: s.ChunkBytes}
	return v, v.Check()
}

// Client is the bot's Web API client of the settings.
func (s Settings) Client() *Client {
	return NewClient(goslack.New(s.BotToken, goslack.OptionAPIURL(s.withDefaults().APIURL)))
}
