package slack

import (
	"context"
	"fmt"
	"strings"

	goslack "github.com/slack-go/slack"
)

// ReportChunk is one message of a report: untrusted text and the caller's delivery id.
type ReportChunk struct {
	DeliveryID string
	Text       string
}

// maxReportSections bounds the sections of one report message, within maxCardText.
const maxReportSections = maxCardText / maxSectionText

// PostReport posts the chunks of a report in order as replies in the thread and returns the ts of
// each one posted. It stops at the first failure; the chunks before it are posted and their ts
// returned. The caller sizes chunks at about one section (3000 characters); a longer chunk is
// spread over a few sections at its line breaks, and what one message cannot hold is cut with
// the marker.
func (c *Client) PostReport(ctx context.Context, channel, thread string, chunks []ReportChunk) ([]string, error) {
	var posted []string
	for i, chunk := range chunks {
		sections, _ := packLines(strings.Split(chunk.Text, "\n"), maxCardText, maxReportSections)
		if len(sections) == 0 {
			// packLines cuts a long first line rather than dropping it; only an empty chunk
			// has no section.
			sections = []string{" "}
		}
		blocks := make([]goslack.Block, 0, len(sections))
		for _, s := range sections {
			blocks = append(blocks, section(s))
		}
		fallback, _ := fitEscaped(chunk.Text, maxFallback, false)
		_, ts, err := c.api.PostMessageContext(ctx, channel,
			goslack.MsgOptionText(fallback, false),
			goslack.MsgOptionBlocks(blocks...),
			goslack.MsgOptionTS(thread),
			goslack.MsgOptionMetadata(deliveryMetadata(reportEvent, "", chunk.DeliveryID)),
			goslack.MsgOptionDisableLinkUnfurl(),
			goslack.MsgOptionDisableMediaUnfurl())
		if err != nil {
			return posted, fmt.Errorf("post report chunk %d of %d: %w", i+1, len(chunks), err)
		}
		posted = append(posted, ts)
	}
	return posted, nil
}
