package mcpbridge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/testmcp"
	"github.com/turncli/turncli/primary/catalog"
)

// FuzzConvertResult reads a tools/call result as an MCP server sends it (the go-sdk's own
// decoding of the JSON) and checks the outcome made of it: it can be written as a receipt's
// canonical JSON, inline media stay within MaxInlineMediaBytes together, every attachment is
// referred to once, by its index, and keeps its kind, MIME type and size, and a failed call
// has a message.
func FuzzConvertResult(f *testing.F) {
	img := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n"))
	big := base64.StdEncoding.EncodeToString(make([]byte, MaxInlineMediaBytes))
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"structuredContent":{"sum":5,"n":1.0}}`,
		`{"content":[{"type":"image","mimeType":"image/png","data":"` + img + `"},{"type":"audio","mimeType":"","data":"` + img + `"}]}`,
		`{"content":[{"type":"image","mimeType":"image/png","data":"` + big + `"},{"type":"image","mimeType":"image/png","data":"` + img + `"}]}`,
		`{"content":[{"type":"resource_link","uri":"file:///a","name":"a","title":"A","description":"d","mimeType":"text/plain"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///b","mimeType":"video/mp4","blob":"` + img + `"}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///c","text":"t"}}]}`,
		`{"content":[{"type":"text","text":"boom"}],"isError":true}`, `{"content":[],"isError":true}`,
		`{"isError":true,"structuredContent":{"why":"x"}}`, `{"content":[]}`, `{}`,
		`{"content":[{"type":"nope"}]}`, `{"content":[{"type":"text","text":"\u0000\ud83d\ude00"}]}`,
		`{"structuredContent":[1,2]}`, `{"structuredContent":` + strings.Repeat("[", 80) + strings.Repeat("]", 80) + `}`,
		`{"content":[{"type":"text","text":"x"}],"_meta":{"k":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var res mcp.CallToolResult
		if err := json.Unmarshal(data, &res); err != nil {
			return
		}
		out, err := convertResult(&res)
		if res.IsError {
			if err == nil || err.Error() == "" {
				t.Fatalf("result %.300q is an error, but converts to %v", data, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("result %.300q fails to convert: %v", data, err)
		}
		if _, err := canonjson.Marshal(out.Value); err != nil && res.StructuredContent == nil {
			t.Fatalf("result %.300q: outcome cannot be written as JSON: %v", data, err)
		}
		inline := 0
		for i, a := range out.Attachments {
			inline += len(a.URI)
			switch {
			case a.Kind != "image" && a.Kind != "audio" && a.Kind != "video" && a.Kind != "file":
				t.Fatalf("result %.300q: attachment %d has kind %q", data, i, a.Kind)
			case a.MimeType == "":
				t.Fatalf("result %.300q: attachment %d has no MIME type", data, i)
			case a.URI != "" && !strings.HasPrefix(a.URI, "data:"+a.MimeType+";base64,"):
				t.Fatalf("result %.300q: attachment %d has URI %.80q", data, i, a.URI)
			}
			if a.URI != "" {
				raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a.URI, "data:"+a.MimeType+";base64,"))
				if err != nil || int64(len(raw)) != a.Size {
					t.Fatalf("result %.300q: attachment %d of size %d carries other data", data, i, a.Size)
				}
			}
		}
		if inline > MaxInlineMediaBytes {
			t.Fatalf("result %.300q: %d bytes of inline media, over %d", data, inline, MaxInlineMediaBytes)
		}
		if res.StructuredContent != nil {
			return // the content's items are not the outcome
		}
		refs := attachmentRefs(out.Value)
		if len(refs) != len(out.Attachments) {
			t.Fatalf("result %.300q: %d attachments, %d references", data, len(out.Attachments), len(refs))
		}
		for i, item := range refs {
			if item["attachment"] != i {
				t.Fatalf("result %.300q: reference %d is to attachment %v", data, i, item["attachment"])
			}
			if _, omitted := item["omitted"]; omitted != (out.Attachments[i].URI == "") {
				t.Fatalf("result %.300q: attachment %d's item and URI disagree on omission", data, i)
			}
		}
	})
}

// attachmentRefs returns the outcome's items that refer to an attachment, in order.
func attachmentRefs(v any) []map[string]any {
	items, ok := v.([]any)
	if !ok {
		return nil
	}
	var refs []map[string]any
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			if _, ok := m["attachment"]; ok {
				refs = append(refs, m)
			}
		}
	}
	return refs
}

// oneFunction is an eager toolkit named srv with one function.
type oneFunction struct{ fn catalog.Function }

func (oneFunction) Name() string        { return "srv" }
func (oneFunction) Description() string { return "One function." }
func (oneFunction) Deferred() bool      { return false }
func (o oneFunction) Load(context.Context) (catalog.Definition, error) {
	return catalog.Definition{Functions: []catalog.Function{o.fn}}, nil
}
func (oneFunction) Call(context.Context, catalog.Call) (catalog.Result, error) {
	return catalog.Result{}, nil
}

// offline is a schema loader that loads nothing: what it compiles uses only the document
// itself and the meta-schemas built into the compiler.
type offline struct{}

func (offline) Load(url string) (any, error) { return nil, errors.New("no outside documents") }

// FuzzToolFunction reads a tool of a tools/list result as an MCP server sends it and checks
// the catalog function made of it: its name is a valid catalog name, its schema is a JSON object
// that compiles on its own (it refers to no document outside itself, such as a local file), a
// registry takes it, and the function made again of what it became is the same. A tool left
// out has one of the reasons.
func FuzzToolFunction(f *testing.F) {
	for _, s := range []string{
		`{"name":"echo","description":"Echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`,
		`{"name":"t","title":"Title only","inputSchema":{"type":"object"}}`,
		`{"name":"","inputSchema":{"type":"object"}}`, `{"name":"` + strings.Repeat("é", 128) + `","inputSchema":{"type":"object"}}`,
		`{"name":"` + strings.Repeat("é", 129) + `","inputSchema":{"type":"object"}}`, `{"name":"t"}`,
		`{"name":"t","inputSchema":{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"type":"object"}}}}`,
		`{"name":"t","inputSchema":{"type":"object","$ref":"file:///proc/self/cwd/testdata/outside-schema.json"}}`,
		`{"name":"t","inputSchema":{"type":"object","properties":{"p":{"$ref":"file:///dev/null"}}}}`,
		`{"name":"t","inputSchema":{"type":"object","$ref":"http://127.0.0.1:1/s.json"}}`,
		`{"name":"t","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}}`,
		`{"name":"t","inputSchema":{"type":"object","properties":{"p":{"pattern":"("}}}}`,
		`{"name":"t","inputSchema":{"type":"object","minimum":"x"}}`, `{"name":"\u0000","inputSchema":{"type":"object"}}`,
		`{"name":"ring\u0007bell","inputSchema":{"type":"object"}}`, `{"name":"a#b?c","inputSchema":{"type":"object"}}`,
		`{"name":"t","inputSchema":` + string(testmcp.NestedSchema(catalog.MaxSchemaDepth)) + `}`,
		`{"name":"t","inputSchema":` + string(testmcp.NestedSchema(catalog.MaxSchemaDepth+1)) + `}`,
		`{"name":"t","inputSchema":true}`, `{"name":"t","inputSchema":[{"type":"object"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tool mcp.Tool
		if err := json.Unmarshal(data, &tool); err != nil {
			return
		}
		fn, reason, err := function("srv", &tool)
		if err != nil {
			if !slices.Contains(SkipReasons, reason) {
				t.Fatalf("tool %.300q: left out for %v with reason %q", data, err, reason)
			}
			return
		}
		if !catalog.ValidName(fn.Name) || fn.Name != tool.Name {
			t.Fatalf("tool %.300q: function named %q", data, fn.Name)
		}
		if err := catalog.NewRegistry().Register(context.Background(), oneFunction{fn}); err != nil {
			t.Fatalf("tool %.300q: accepted, but the catalog refuses it: %v", data, err)
		}
		if want := tool.Description; fn.Description != want && (want != "" || fn.Description != tool.Title) {
			t.Fatalf("tool %.300q: description %q", data, fn.Description)
		}
		if fn.InputSchema == nil {
			if tool.InputSchema != nil {
				t.Fatalf("tool %.300q: schema dropped", data)
			}
			return
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(fn.InputSchema)))
		if _, isObject := doc.(map[string]any); err != nil || !isObject {
			t.Fatalf("tool %.300q: schema %s is not a JSON object", data, fn.InputSchema)
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(offline{})
		if err := c.AddResource("mcp:///tool.json", doc); err != nil {
			t.Fatalf("tool %.300q: schema: %v", data, err)
		}
		if _, err := c.Compile("mcp:///tool.json"); err != nil {
			t.Fatalf("tool %.300q: accepted schema %s needs outside documents: %v", data, fn.InputSchema, err)
		}
		var again mcp.Tool
		if err := json.Unmarshal(fn.InputSchema, &again.InputSchema); err != nil {
			t.Fatalf("tool %.300q: schema %s does not read back: %v", data, fn.InputSchema, err)
		}
		again.Name, again.Description = fn.Name, fn.Description
		fn2, _, err := function("srv", &again)
		if err != nil || !reflect.DeepEqual(fn2, fn) {
			t.Fatalf("tool %.300q: function %+v made again is %+v, %v", data, fn, fn2, err)
		}
	})
}
