package canonjson

import "testing"

// realistic is a ~2 KB tools.call request as a sandboxed agent sends it: nested arguments,
// non-ASCII text, escapes, integers and floats.
const realistic = `{
  "operation": "tools.call",
  "call_id": "c6f1d3a2-5b7e-4c9a-9f0e-2d8b1a7c4e55",
  "toolkit": "calendar",
  "function": "create_event",
  "arguments": {
    "title": "Sprint review — équipe plateforme",
    "description": "Agenda:\n1. Demo of the new scheduler\n2. Retro \"what went well\"\n3. Planning <next> & follow-ups\n\tOwner: Zoë",
    "start": "2025-03-14T09:30:00+01:00",
    "end": "2025-03-14T10:45:00+01:00",
    "timezone": "Europe/Amsterdam",
    "all_day": false,
    "reminder_minutes": [10, 30, 1440],
    "priority": 2,
    "weight": 0.75,
    "budget": 1.5e3,
    "location": {"name": "Room 4.12 \"Hilbert\"", "lat": 52.3676, "lon": 4.9041, "floor": 4, "accessible": true},
    "attendees": [
      {"email": "ana@example.org", "name": "Ana Lima", "optional": false, "response": "accepted"},
      {"email": "björn@example.org", "name": "Björn Åström", "optional": true, "response": null},
      {"email": "chen@example.org", "name": "陈伟", "optional": false, "response": "tentative"},
      {"email": "dev@example.org", "name": "Dev Patel", "optional": true, "response": "declined"}
    ],
    "recurrence": {"freq": "WEEKLY", "interval": 2, "count": 6, "by_day": ["FR"], "exceptions": []},
    "attachments": [
      {"url": "https://example.org/docs/review?id=42&lang=en", "size": 20480, "mime": "application/pdf"},
      {"url": "https://example.org/slides/\u00e9t\u00e9.key", "size": 1048576, "mime": "application/vnd.apple.keynote"}
    ],
    "metadata": {"source": "mindroom", "version": "1.4.2", "trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "emoji": "📅✅", "ratio": -0.125, "retries": 0, "tags": ["review", "sprint-42", "platform"]},
    "notes": "Line one\r\nLine two\u2028Line three; path C:\\Users\\zoe\\agenda.md",
    "visibility": "team",
    "color": "#3366ff",
    "conference": {"provider": "jitsi", "room": "sprint-review-42", "dial_in": null, "pin": 902114}
  }
}`

func BenchmarkParse(b *testing.B) {
	data := []byte(realistic)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	v, err := Parse([]byte(realistic))
	if err != nil {
		b.Fatal(err)
	}
	out, _ := Marshal(v)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCanonicalize(b *testing.B) {
	data := []byte(realistic)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Canonicalize(data); err != nil {
			b.Fatal(err)
		}
	}
}
