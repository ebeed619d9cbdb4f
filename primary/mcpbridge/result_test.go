package mcpbridge

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
)

func TestMCPResultToOutcome(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G'}
	for _, tc := range []struct {
		name        string
		res         *mcp.CallToolResult
		wantValue   string // canonical JSON
		wantAttach  string // canonical JSON of the attachments; "" means none
		wantFailure string
	}{
		{name: "SingleTextBlockIsAString",
			res:       &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}},
			wantValue: `"hello"`},
		{name: "SeveralTextBlocksAreAList",
			res:       &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
			wantValue: `["a","b"]`},
		{name: "StructuredContentWinsOverContent",
			res: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"sum":5}`}},
				StructuredContent: map[string]any{"sum": float64(5), "ok": true}},
			wantValue: `{"ok":true,"sum":5}`},
		{name: "NoContentIsNull", res: &mcp.CallToolResult{}, wantValue: `null`},
		{name: "ImagesAndAudioBecomeDataURIAttachments",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "caption"},
				&mcp.ImageContent{MIMEType: "image/png", Data: png},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
			}},
			wantValue: `["caption",{"attachment":0,"mime_type":"image/png","type":"image"},{"attachment":1,"mime_type":"audio/wav","type":"audio"}]`,
			wantAttach: `[{"kind":"image","mime_type":"image/png","size":4,"uri":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(png) + `"},` +
				`{"kind":"audio","mime_type":"audio/wav","size":4,"uri":"data:audio/wav;base64,UklGRg=="}]`},
		{name: "SingleImageIsAListOfOneItem",
			res:        &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: png}}},
			wantValue:  `[{"attachment":0,"mime_type":"image/png","type":"image"}]`,
			wantAttach: `[{"kind":"image","mime_type":"image/png","size":4,"uri":"data:image/png;base64,iVBORw=="}]`},
		{name: "ResourcesAreObjects",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ResourceLink{URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.txt", MIMEType: "text/plain", Text: "bee"}},
			}},
			wantValue: `[{"mime_type":"text/plain","name":"a.txt","type":"resource_link","uri":"file:///a.txt"},` +
				`{"mime_type":"text/plain","text":"bee","type":"resource","uri":"file:///b.txt"}]`},
		{name: "EmbeddedBlobIsAnAttachment",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///c.bin", Blob: []byte{1, 2}}},
			}},
			wantValue:  `[{"attachment":0,"mime_type":"application/octet-stream","type":"resource","uri":"file:///c.bin"}]`,
			wantAttach: `[{"kind":"file","mime_type":"application/octet-stream","name":"file:///c.bin","size":2,"uri":"data:application/octet-stream;base64,AQI="}]`},
		{name: "IsErrorFailsWithTheText",
			res: &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
				&mcp.TextContent{Text: "disk full"}, &mcp.ImageContent{MIMEType: "image/png", Data: png}, &mcp.TextContent{Text: "try later"},
			}},
			wantFailure: "disk full\ntry later"},
		{name: "IsErrorWithoutTextFailsWithStructuredContent",
			res:         &mcp.CallToolResult{IsError: true, StructuredContent: map[string]any{"code": "E1"}},
			wantFailure: `{"code":"E1"}`},
		{name: "IsErrorWithNothingFailsWithAGenericMessage",
			res:         &mcp.CallToolResult{IsError: true},
			wantFailure: "MCP tool reported an error without a message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := convertResult(tc.res)
			if tc.wantFailure != "" {
				if err == nil || err.Error() != tc.wantFailure {
					t.Fatalf("err = %v, want %q", err, tc.wantFailure)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			value, err := canonjson.Marshal(got.Value)
			if err != nil {
				t.Fatal(err)
			}
			if string(value) != tc.wantValue {
				t.Errorf("value = %s\nwant    %s", value, tc.wantValue)
			}
			checkAttachments(t, got.Attachments, tc.wantAttach)
		})
	}
}

func checkAttachments(t *testing.T, got []catalog.Attachment, want string) {
	t.Helper()
	if want == "" {
		if len(got) != 0 {
			t.Errorf("attachments = %+v, want none", got)
		}
		return
	}
	b, err := canonjson.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("attachments = %s\nwant          %s", b, want)
	}
}

func TestMCPMediaPastTheInlineLimitIsAttachedWithoutData(t *testing.T) {
	big := bytes.Repeat([]byte{7}, MaxInlineMediaBytes)
	got, err := convertResult(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}},
		&mcp.ImageContent{MIMEType: "image/png", Data: big},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Attachments) != 2 || got.Attachments[0].URI == "" || got.Attachments[1].URI != "" ||
		got.Attachments[1].Size != int64(len(big)) {
		t.Fatalf("attachments = %+v", got.Attachments)
	}
	value, _ := canonjson.Marshal(got.Value)
	if !strings.Contains(string(value), `"omitted":"24576 bytes of data exceed the inline media limit"`) {
		t.Errorf("value = %s", value)
	}
}
