package client

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestTimedCallID(t *testing.T) {
	now := time.Date(2026, 12, 5, 23, 30, 1, 234_567_890, time.UTC)
	t.Run("CarriesItsTimeToTheMillisecondAndIsAVersion7UUID", func(t *testing.T) {
		id, err := newTimedCallID(bytes.NewReader(bytes.Repeat([]byte{0xff}, 10)), now)
		if err != nil {
			t.Fatal(err)
		}
		if canonical, ok := parseUUID(id); !ok || canonical != id || id[14] != '7' || id[19] != 'b' {
			t.Fatalf("id %s is not a canonical version 7 UUID of the RFC 9562 variant", id)
		}
		got, ok := timedCallIDTime(id)
		if want := now.Truncate(time.Millisecond); !ok || !got.Equal(want) {
			t.Fatalf("time of %s = %v, %v; want %v", id, got, ok, want)
		}
	})
	t.Run("TheRestIsRandom", func(t *testing.T) {
		a, _ := newTimedCallID(bytes.NewReader(make([]byte, 10)), now)
		b, _ := newTimedCallID(bytes.NewReader(bytes.Repeat([]byte{0xff}, 10)), now)
		if a[:13] != b[:13] || a == b {
			t.Fatalf("%s and %s: same time, same random bits?", a, b)
		}
	})
	t.Run("ShortRandomnessIsAnError", func(t *testing.T) {
		if _, err := newTimedCallID(bytes.NewReader(make([]byte, 9)), now); err == nil {
			t.Fatal("nine random bytes made an id")
		}
	})
	t.Run("OnlyTheCanonicalSpellingOfAVersion7UUIDHasATime", func(t *testing.T) {
		id, _ := newTimedCallID(bytes.NewReader(make([]byte, 10)), now)
		v4, _ := newCallID(bytes.NewReader(make([]byte, 16)))
		for _, s := range []string{"", v4, strings.ToUpper(id), "{" + id + "}", strings.ReplaceAll(id, "-", ""),
			id[:19] + "7" + id[20:], // variant bits not RFC 9562
		} {
			if _, ok := timedCallIDTime(s); ok {
				t.Errorf("%q has a time", s)
			}
		}
	})
}
