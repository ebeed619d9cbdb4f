package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name, format, level string
		check               func(t *testing.T, out string)
		wantErr             bool
	}{
		{name: "JSONWritesOneObjectPerLine", format: "json", level: "info", check: func(t *testing.T, out string) {
			var line map[string]any
			if err := json.Unmarshal([]byte(out), &line); err != nil || line["msg"] != "started" || line["k"] != "v" {
				t.Fatalf("line %q (%v)", out, err)
			}
		}},
		{name: "TextWritesKeyValuePairs", format: "text", level: "info", check: func(t *testing.T, out string) {
			if !strings.Contains(out, "msg=started k=v") {
				t.Fatalf("line %q", out)
			}
		}},
		{name: "LevelAboveInfoDropsInfo", format: "json", level: "warn", check: func(t *testing.T, out string) {
			if out != "" {
				t.Fatalf("wrote %q", out)
			}
		}},
		{name: "UnknownFormatIsRefused", format: "xml", level: "info", wantErr: true},
		{name: "UnknownLevelIsRefused", format: "json", level: "loud", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := New(&buf, tc.format, tc.level)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			log.Info("started", "k", "v")
			tc.check(t, buf.String())
		})
	}
}
