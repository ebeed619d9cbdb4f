package threadfeed

import "testing"

func TestCheckSeen(t *testing.T) {
	cutShort := Item{Key: "call_approval/3", Text: "0123456789", Preview: "0123", PreviewTruncated: true}
	whole := Item{Key: "call_approval/3", Text: "0123", Preview: "0123"}
	for _, c := range []struct {
		name     string
		decision Action
		it       Item
		seen     Seen
		refused  bool
	}{
		{"ApprovingACutPreviewIsRefused", ActionApprove, cutShort, Seen{CardBytes: 4}, true},
		{"AllowingACutPreviewIsRefused", ActionAllowOnce, cutShort, Seen{CardBytes: 4}, true},
		{"ApprovingAfterOpeningTheFullTextPasses", ActionApprove, cutShort, Seen{CardBytes: 4, FullText: true}, false},
		{"DenyingACutPreviewPasses", ActionDeny, cutShort, Seen{CardBytes: 4}, false},
		{"CommentingOnACutPreviewPasses", ActionComment, cutShort, Seen{CardBytes: 4}, false},
		{"ApprovingAWholeTextPasses", ActionApprove, whole, Seen{CardBytes: 4}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkSeen(c.decision, c.it, c.seen)
			if (err != nil) != c.refused {
				t.Fatalf("checkSeen: %v, refused want %v", err, c.refused)
			}
			want := "call_approval/3 was shown cut to 4 of its 10 bytes; open its full text before you " + string(c.decision) +
				" it (denying or commenting needs no full reading)"
			if err != nil && err.Error() != want {
				t.Fatalf("refusal %q, want %q", err, want)
			}
		})
	}
}
