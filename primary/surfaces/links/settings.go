package links

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// Settings are the decision links' section of the primary's configuration. Links are minted
// only once BaseURL is set: a link must point where people can open it.
type Settings struct {
	// BaseURL is the public origin of the REST listener as people's browsers reach it
	// (https://turncli.example.org); a link is BaseURL followed by Prefix and its token.
	BaseURL string
	// Expiry is how long a link can be used after it is minted.
	Expiry time.Duration
}

// Bounds of the section.
const (
	DefaultExpiry = 24 * time.Hour
	MinExpiry     = time.Minute
	MaxExpiry     = 30 * 24 * time.Hour
)

// DefaultSettings returns the section's defaults.
func DefaultSettings() Settings { return Settings{Expiry: DefaultExpiry} }

// On reports whether links can be minted.
func (s Settings) On() bool { return s.BaseURL != "" }

// BindFlags binds the section to fs, with DefaultSettings (or the environment) as the flags'
// defaults.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	d := DefaultSettings()
	fs.StringVar(&s.BaseURL, "decision-link-base", os.Getenv("MINDROOM_DECISION_LINK_BASE"),
		"public http(s) origin of the REST listener that decision links point to; links are minted only when it is set (env MINDROOM_DECISION_LINK_BASE)")
	fs.DurationVar(&s.Expiry, "decision-link-expiry", d.Expiry, "how long a decision link can be used after it is minted (1m..720h)")
}

// Validate reports settings that cannot work and fills zero fields from DefaultSettings.
func (s *Settings) Validate() error {
	if s.Expiry == 0 {
		s.Expiry = DefaultExpiry
	}
	if s.Expiry < MinExpiry || s.Expiry > MaxExpiry {
		return fmt.Errorf("decision links: the expiry must be %v..%v, not %v", MinExpiry, MaxExpiry, s.Expiry)
	}
	if s.BaseURL == "" {
		return nil
	}
	s.BaseURL = strings.TrimSuffix(s.BaseURL, "/")
	u, err := url.Parse(s.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("decision links: the base URL %q is not an http(s) origin such as https://turncli.example.org", s.BaseURL)
	}
	return nil
}
