package mcpbridge

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/primary/catalog"
)

// MaxInlineMediaBytes bounds the data: URIs of one result's attachments together, so that a
// receipt stays well inside the Agent CLI's 64 KiB response limit. Media past it is attached
// without its data (kind, MIME type and size only), and its content item says so.
const MaxInlineMediaBytes = 24 * 1024

// convertResult maps a tools/call result to a call outcome:
//
//   - isError: a failed call whose outcome is the text of the content (its text blocks, one per
//     line), else the structured content as JSON.
//   - structuredContent, when present, is the value.
//   - Otherwise the content: one text block becomes a string; anything else a list with one item
//     per block: text as a string, image and audio as {"type","mime_type","attachment":index}
//     (the data goes to the receipt's attachments as a data: URI), resource links and embedded
//     resources as objects. No content is null.
func convertResult(res *mcp.CallToolResult) (catalog.Result, error) {
	if res == nil {
		return catalog.Result{}, nil
	}
	if res.IsError {
		return catalog.Result{}, toolError(res)
	}
	var out catalog.Result
	budget := MaxInlineMediaBytes
	items := make([]any, 0, len(res.Content))
	for _, c := range res.Content {
		items = append(items, contentItem(c, &out, &budget))
	}
	switch {
	case res.StructuredContent != nil:
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return catalog.Result{}, fmt.Errorf("MCP tool returned structured content that is not JSON: %v", err)
		}
		out.Value = json.RawMessage(raw)
	case len(items) == 0:
		out.Value = nil
	case len(items) == 1 && isString(items[0]):
		out.Value = items[0]
	default:
		out.Value = items
	}
	return out, nil
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// contentItem is one content block as an item of the outcome; media goes to out's attachments.
func contentItem(c mcp.Content, out *catalog.Result, budget *int) any {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return attach(out, budget, "image", c.MIMEType, c.Data, "")
	case *mcp.AudioContent:
		return attach(out, budget, "audio", c.MIMEType, c.Data, "")
	case *mcp.ResourceLink:
		item := map[string]any{"type": "resource_link", "uri": c.URI}
		setIf(item, "name", c.Name)
		setIf(item, "title", c.Title)
		setIf(item, "description", c.Description)
		setIf(item, "mime_type", c.MIMEType)
		return item
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return map[string]any{"type": "resource"}
		}
		if len(r.Blob) > 0 {
			item := attach(out, budget, mediaKind(r.MIMEType), r.MIMEType, r.Blob, r.URI)
			item["type"] = "resource"
			item["uri"] = r.URI
			return item
		}
		item := map[string]any{"type": "resource", "uri": r.URI, "text": r.Text}
		setIf(item, "mime_type", r.MIMEType)
		return item
	default:
		raw, err := c.MarshalJSON()
		if err != nil {
			return map[string]any{"type": "unknown"}
		}
		return json.RawMessage(raw)
	}
}

// attach adds data as an attachment and returns the item that refers to it.
func attach(out *catalog.Result, budget *int, kind, mimeType string, data []byte, name string) map[string]any {
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	a := catalog.Attachment{Kind: kind, MimeType: mimeType, Name: name, Size: int64(len(data))}
	item := map[string]any{"type": kind, "mime_type": mimeType, "attachment": len(out.Attachments)}
	uri := "data:" + mimeType + ";base64," + base64.StdEncoding.EncodeToString(data)
	if len(uri) <= *budget {
		a.URI = uri
		*budget -= len(uri)
	} else {
		item["omitted"] = fmt.Sprintf("%d bytes of data exceed the inline media limit", len(data))
	}
	out.Attachments = append(out.Attachments, a)
	return item
}

func mediaKind(mimeType string) string {
	for _, k := range []string{"image", "audio", "video"} {
		if strings.HasPrefix(mimeType, k+"/") {
			return k
		}
	}
	return "file"
}

func setIf(m map[string]any, key, value string) {
	if value != "" {
		m[key] = value
	}
}

// toolError is the failure of a result marked isError.
func toolError(res *mcp.CallToolResult) error {
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && t.Text != "" {
			texts = append(texts, t.Text)
		}
	}
	if len(texts) > 0 {
		return errors.New(strings.Join(texts, "\n"))
	}
	if res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			return errors.New(string(raw))
		}
	}
	return errors.New("MCP tool reported an error without a message")
}
