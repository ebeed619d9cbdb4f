package hostkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/turncli/turncli/hostkit"
)

type level int

func (l *level) UnmarshalText([]byte) error { *l = 1; return nil }

type Base struct {
	ID    string `json:"id" description:"Stable id."`
	Shade string `json:"shade"` // hidden by the outer Shade
}

type Extra struct {
	Note string `json:"note"`
}

type everything struct {
	Base
	*Extra
	Shade    int               `json:"shade"`
	Name     string            `json:"name" description:"Who to greet."`
	Loud     bool              `json:"loud,omitempty"`
	Small    int8              `json:"small"`
	Port     uint16            `json:"port"`
	Count    uint              `json:"count"`
	Ratio    float64           `json:"ratio,omitzero"`
	Tags     []string          `json:"tags"`
	Blob     []byte            `json:"blob,omitempty"`
	Pair     [2]int            `json:"pair"`
	Labels   map[string]int    `json:"labels"`
	Nested   *struct{ X bool } `json:"nested"`
	When     time.Time         `json:"when"`
	Any      any               `json:"any"`
	Raw      json.RawMessage   `json:"raw"`
	Level    level             `json:"level"`
	Quoted   int64             `json:"quoted,string"`
	Skipped  string            `json:"-"`
	Untagged string
	private  string
}

func TestInputSchema(t *testing.T) {
	t.Run("StructMapsEveryFieldKindByItsJSONName", func(t *testing.T) {
		got, err := hostkit.InputSchema[everything]()
		if err != nil {
			t.Fatal(err)
		}
		want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{` +
			`"Untagged":{"type":"string"},` +
			`"any":{},` +
			`"blob":{"contentEncoding":"base64","type":"string"},` +
			`"count":{"minimum":0,"type":"integer"},` +
			`"id":{"description":"Stable id.","type":"string"},` +
			`"labels":{"additionalProperties":{"type":"integer"},"type":"object"},` +
			`"level":{"type":"string"},` +
			`"loud":{"type":"boolean"},` +
			`"name":{"description":"Who to greet.","type":"string"},` +
			`"nested":{"additionalProperties":false,"properties":{"X":{"type":"boolean"}},"required":["X"],"type":"object"},` +
			`"note":{"type":"string"},` +
			`"pair":{"items":{"type":"integer"},"maxItems":2,"minItems":2,"type":"array"},` +
			`"port":{"maximum":65535,"minimum":0,"type":"integer"},` +
			`"quoted":{"type":"string"},` +
			`"ratio":{"type":"number"},` +
			`"raw":{},` +
			`"shade":{"type":"integer"},` +
			`"small":{"maximum":127,"minimum":-128,"type":"integer"},` +
			`"tags":{"items":{"type":"string"},"type":"array"},` +
			`"when":{"format":"date-time","type":"string"}},` +
			`"required":["shade","name","small","port","count","tags","pair","labels","when","any","raw","level","quoted","Untagged","id"],"type":"object"}`
		if string(got) != want {
			t.Errorf("schema:\n got %s\nwant %s", got, want)
		}
	})

	t.Run("PointerToStructIsTheStructsSchema", func(t *testing.T) {
		a, err := hostkit.InputSchema[*struct {
			A string `json:"a"`
		}]()
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}` {
			t.Errorf("schema = %s", a)
		}
	})

	t.Run("MapOfStringKeysIsAnOpenObject", func(t *testing.T) {
		m, err := hostkit.InputSchema[map[string]float64]()
		if err != nil {
			t.Fatal(err)
		}
		if string(m) != `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":{"type":"number"},"type":"object"}` {
			t.Errorf("schema = %s", m)
		}
	})

	type node struct {
		Next *node `json:"next"`
	}
	type withChan struct {
		C chan int `json:"c"`
	}
	type withStringer struct {
		S interface{ String() string } `json:"s"`
	}
	type withBadMap struct {
		M map[bool]int `json:"m"`
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"RecursiveTypeIsRefused", func() error { _, err := hostkit.InputSchema[node](); return err }, "recursive type"},
		{"ChannelIsRefused", func() error { _, err := hostkit.InputSchema[withChan](); return err }, "chan int"},
		{"NonEmptyInterfaceIsRefused", func() error { _, err := hostkit.InputSchema[withStringer](); return err }, "has no JSON Schema"},
		{"MapWithBoolKeysIsRefused", func() error { _, err := hostkit.InputSchema[withBadMap](); return err }, "cannot be a JSON object key"},
		{"NonObjectInputIsRefused", func() error { _, err := hostkit.InputSchema[[]string](); return err }, "must be a struct"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestInputSchemaAcceptsWhatItsTypeDecodes compiles a derived schema and checks it against
// documents encoding/json would and would not decode into the type.
func TestInputSchemaAcceptsWhatItsTypeDecodes(t *testing.T) {
	type input struct {
		Query string   `json:"query"`
		Limit *int     `json:"limit"`
		Tags  []string `json:"tags,omitempty"`
		Page  struct {
			Size uint8 `json:"size"`
		} `json:"page"`
	}
	raw, err := hostkit.InputSchema[input]()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("input.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("input.json")
	if err != nil {
		t.Fatalf("derived schema does not compile: %v", err)
	}
	for _, tc := range []struct {
		name, doc string
		valid     bool
	}{
		{"RequiredOnly", `{"query":"x","page":{"size":10}}`, true},
		{"WithOptionals", `{"query":"x","limit":5,"tags":["a"],"page":{"size":255}}`, true},
		{"MissingRequired", `{"page":{"size":1}}`, false},
		{"WrongType", `{"query":1,"page":{"size":1}}`, false},
		{"UnknownProperty", `{"query":"x","page":{"size":1},"extra":1}`, false},
		{"OutOfRangeForUint8", `{"query":"x","page":{"size":256}}`, false},
		{"FractionForInteger", `{"query":"x","limit":1.5,"page":{"size":1}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(inst); (err == nil) != tc.valid {
				t.Fatalf("valid = %v, want %v (%v)", err == nil, tc.valid, err)
			}
		})
	}
}

func TestFunc(t *testing.T) {
	type in struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	type out struct {
		Sum int `json:"sum"`
	}
	f := hostkit.Func("add", "Adds.", func(_ context.Context, _ hostkit.Call, v in) (out, error) { return out{v.A + v.B}, nil })

	t.Run("HandlerDecodesArgumentsAndReturnsTheOutput", func(t *testing.T) {
		v, err := f.Handler(t.Context(), hostkit.Call{}, json.RawMessage(`{"a":2,"b":3}`))
		if err != nil || v != (out{5}) {
			t.Fatalf("handler = %v, %v", v, err)
		}
	})
	t.Run("ArgumentsThatDoNotDecodeFailTheCall", func(t *testing.T) {
		if _, err := f.Handler(t.Context(), hostkit.Call{}, json.RawMessage(`{"a":"x"}`)); err == nil || !strings.Contains(err.Error(), "arguments do not fit add") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ProgressAndAttachmentsOfAZeroCallAreNoOps", func(t *testing.T) {
		var c hostkit.Call
		c.Waiting()
		c.Running()
		c.Attach(hostkit.Attachment{Kind: hostkit.Image, MimeType: "image/png"})
	})
	t.Run("UnsupportedInputIsReportedByNew", func(t *testing.T) {
		bad := hostkit.Func("bad", "Takes a channel.", func(context.Context, hostkit.Call, struct {
			C chan int `json:"c"`
		}) (int, error) {
			return 0, nil
		})
		_, err := hostkit.New(hostkit.Config{Address: "x", Token: "t"}, hostkit.Toolkit{Name: "k", Functions: []hostkit.Function{bad}})
		if err == nil || !strings.Contains(err.Error(), `function "bad"`) {
			t.Fatalf("New = %v", err)
		}
	})
}
