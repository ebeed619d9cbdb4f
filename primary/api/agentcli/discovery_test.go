package agentcli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
)

// item is a discovery item: a prepared function, or a deferred toolkit.
type item struct {
	Deferred    bool   `json:"deferred"`
	Description string `json:"description"`
	Function    string `json:"function"`
	Toolkit     string `json:"toolkit"`
}

// decodeItem checks an item's exact shape (section 5) and reads it.
func decodeItem(t testing.TB, raw json.RawMessage) item {
	t.Helper()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatalf("item %s: %v", raw, err)
	}
	want := []string{"description", "function", "toolkit"}
	if _, ok := keys["deferred"]; ok {
		want = []string{"deferred", "description", "toolkit"}
		if string(keys["deferred"]) != "true" {
			t.Fatalf("deferred item %s", raw)
		}
	}
	got := mapKeys(keys)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("item keys %v, want %v: %s", got, want, raw)
	}
	var it item
	if err := json.Unmarshal(raw, &it); err != nil {
		t.Fatal(err)
	}
	return it
}

// walk pages through tools.list or context.list with limit and returns every item and every
// page body. It checks each page's size and item count.
func walk(t testing.TB, s *session, operation string, limit int) (items []json.RawMessage, pages [][]byte) {
	t.Helper()
	var cursor *string
	for {
		op := fmt.Sprintf(`{"operation":%q,"limit":%d}`, operation, limit)
		if cursor != nil {
			op = fmt.Sprintf(`{"operation":%q,"limit":%d,"cursor":%s}`, operation, limit, jstr(*cursor))
		}
		r := s.post(op)
		p := decodePage(t, r)
		if len(r.body) > maxBody {
			t.Fatalf("%s page of %d bytes exceeds 64 KiB", operation, len(r.body))
		}
		if len(p.Items) > limit || (len(p.Items) == 0 && p.NextCursor != nil) {
			t.Fatalf("%s page with limit %d holds %d items (next %v)", operation, limit, len(p.Items), p.NextCursor)
		}
		items = append(items, p.Items...)
		pages = append(pages, r.body)
		if p.NextCursor == nil {
			return items, pages
		}
		cursor = p.NextCursor
		if len(pages) > 100000 {
			t.Fatal("listing never ends")
		}
	}
}

func rawStrings(items []json.RawMessage) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(it)
	}
	return out
}

// Section 5: tools.list item shapes, catalog order, no schemas.
func TestToolsListShowsFunctionsAndDeferredToolkitsWithoutSchemas(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	r := s.post(`{"operation":"tools.list","limit":1000}`)
	p := decodePage(t, r)
	if p.NextCursor != nil {
		t.Fatalf("the whole default catalog fits one page, got next_cursor %q", *p.NextCursor)
	}
	if strings.Contains(string(r.body), "schema\":") {
		t.Fatalf("items carry schemas: %s", r.body)
	}
	var testFunctions []string
	var deferred []string
	for _, raw := range p.Items {
		it := decodeItem(t, raw)
		switch {
		case it.Toolkit == "test":
			testFunctions = append(testFunctions, it.Function)
		case it.Deferred:
			deferred = append(deferred, string(raw))
		}
	}
	wantFunctions := []string{"echo", "sleep", "fail", "large", "wait", "gate", "release", "media", "huge_schema", "identity", "confirm_echo"}
	if !slices.Equal(testFunctions, wantFunctions) {
		t.Errorf("test functions in order %v, want %v", testFunctions, wantFunctions)
	}
	wantDeferred := `{"deferred":true,"description":"Deferred test toolkit: ping and add, loaded on first describe or call.` +
		" (not loaded yet: `mindroom-agent tools describe test_deferred` loads it and names its functions)" + `","toolkit":"test_deferred"}`
	if !slices.Equal(deferred, []string{wantDeferred}) {
		t.Errorf("deferred items %v, want [%s]", deferred, wantDeferred)
	}
	if !slices.Contains(rawStrings(p.Items), `{"description":"Return the arguments object unchanged.","function":"echo","toolkit":"test"}`) {
		t.Errorf("test.echo item missing or misshapen: %s", r.body)
	}
	if i := slices.Index(rawStrings(p.Items), wantDeferred); i != len(p.Items)-1 {
		t.Errorf("test_deferred (registered last) is item %d of %d", i, len(p.Items))
	}
	if n := env.Primary.Internals().TestDeferred.Loads(); n != 0 {
		t.Errorf("listing loaded the deferred toolkit %d times", n)
	}
}

// bulkToolkits are n toolkits with long descriptions (a word "bulk" in each); odd ones are
// deferred, even ones have two functions.
func bulkToolkits(n, descriptionBytes int) []catalog.Toolkit {
	var out []catalog.Toolkit
	for i := range n {
		tk := &fakeToolkit{
			name:        fmt.Sprintf("bulk_%02d", i),
			description: "bulk " + strings.Repeat(string(rune('a'+i%26)), descriptionBytes),
			deferred:    i%2 == 1,
		}
		if !tk.deferred {
			tk.functions = []catalog.Function{
				{Name: "first", Description: "bulk first " + strings.Repeat("f", descriptionBytes)},
				{Name: "second", Description: "bulk second"},
			}
		}
		out = append(out, tk)
	}
	return out
}

// Section 5: walking tools.list at any page size yields every item once, in one order, and no
// page exceeds 64 KiB; a page that stops early is one the next item would have overflowed.
func TestListingWalksEveryItemOnceAtAnyPageSize(t *testing.T) {
	t.Parallel()
	env := startEnv(t, bulkToolkits(24, 7000)...)
	s := open(t, env)

	all, pages := walk(t, s, "tools.list", 1000)
	if len(pages) < 3 {
		t.Fatalf("the catalog (%d items) should need several 64 KiB pages, got %d", len(all), len(pages))
	}
	seen := map[string]bool{}
	for _, raw := range all {
		it := decodeItem(t, raw)
		key := it.Toolkit + "." + it.Function
		if seen[key] {
			t.Fatalf("item %s listed twice", key)
		}
		seen[key] = true
	}
	// Each page but the last stopped because the next item did not fit.
	n := 0
	for _, body := range pages[:len(pages)-1] {
		p := decodePage(t, reply{code: http.StatusOK, body: body})
		n += len(p.Items)
		next := all[n]
		withNext := len(body) - len(jstr(*p.NextCursor)) + 1 + len(next) + len("null")
		if withNext <= maxBody {
			t.Errorf("a page of %d bytes stopped before an item of %d bytes that fitted", len(body), len(next))
		}
	}

	for _, limit := range []int{1, 2, 7, 1000} {
		t.Run(fmt.Sprintf("Limit%dWalksTheSameItems", limit), func(t *testing.T) {
			got, _ := walk(t, s, "tools.list", limit)
			if !slices.Equal(rawStrings(got), rawStrings(all)) {
				t.Fatalf("limit %d walked %d items, want the same %d in the same order", limit, len(got), len(all))
			}
		})
	}
	if n := env.Primary.Internals().TestDeferred.Loads(); n != 0 {
		t.Errorf("listing loaded the deferred toolkit %d times", n)
	}
}

// standard is the shell mode of a response whose toolkit selection leaves out "shell": the
// minimal mode needs the shell toolkit, and these functions declare no trait standard hides.
const standard = responsev1.ShellMode_SHELL_MODE_STANDARD

// Section 5: a page may be exactly 64 KiB, never one byte more.
func TestListPageMayBeExactly64KiB(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	register := func(prefix string, descriptionA, descriptionB int) {
		for _, tk := range []*fakeToolkit{
			{name: prefix + "_a", description: strings.Repeat("a", descriptionA), deferred: true},
			{name: prefix + "_b", description: strings.Repeat("b", descriptionB), deferred: true},
			{name: prefix + "_c", description: "c", deferred: true},
		} {
			if err := env.Primary.Internals().Registry.Register(t.Context(), tk); err != nil {
				t.Fatal(err)
			}
		}
	}
	only := func(pattern string) func(*responsev1.OpenResponseRequest) {
		return func(r *responsev1.OpenResponseRequest) { r.Toolkits, r.ShellMode = []string{pattern}, standard }
	}
	// Measure a two-item page with a cursor, then grow the second item to fill 64 KiB exactly.
	register("rad", 40000, 1)
	probe := open(t, env, only("rad_*"))
	size := len(probe.ok(probe.post(`{"operation":"tools.list","limit":2}`)).body)
	fill := 1 + maxBody - size
	register("pad", 40000, fill)
	register("qad", 40000, fill+1)

	t.Run("PageOfExactly65536BytesHoldsBothItems", func(t *testing.T) {
		s := open(t, env, only("pad_*"))
		r := s.ok(s.post(`{"operation":"tools.list","limit":1000}`))
		p := decodePage(t, r)
		if len(r.body) != maxBody || len(p.Items) != 2 || p.NextCursor == nil {
			t.Fatalf("page of %d bytes with %d items, want 65536 bytes with 2 items and a cursor", len(r.body), len(p.Items))
		}
	})
	t.Run("OneByteMoreMovesTheSecondItemToTheNextPage", func(t *testing.T) {
		s := open(t, env, only("qad_*"))
		items, pages := walk(t, s, "tools.list", 1000)
		if len(items) != 3 || len(pages) != 2 || len(pages[0]) > maxBody {
			t.Fatalf("%d items on %d pages (first %d bytes)", len(items), len(pages), len(pages[0]))
		}
		if p := decodePage(t, reply{code: http.StatusOK, body: pages[0]}); len(p.Items) != 1 {
			t.Fatalf("first page holds %d items, want 1", len(p.Items))
		}
	})
}

// Section 5: cursors are opaque and checked; a bad one is 422.
func TestBadCursorIsInvalidDiscoveryCursor(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	full := open(t, env)
	narrow := open(t, env, func(r *responsev1.OpenResponseRequest) { r.Toolkits, r.ShellMode = []string{"test"}, standard })
	first := decodePage(t, full.post(`{"operation":"tools.list","limit":1}`)) // ends inside "shell"
	if first.NextCursor == nil {
		t.Fatal("no cursor")
	}
	for _, tc := range []struct{ name, cursor string }{
		{"NotBase64IsRefused", "!!!"},
		{"ArbitraryBase64IsRefused", "AAAA"},
		{"ArbitraryTextIsRefused", "next-page-please"},
		{"CursorNamingAToolkitOutsideTheViewIsRefused", *first.NextCursor},
		{"TruncatedCursorIsRefused", (*first.NextCursor)[:len(*first.NextCursor)-2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireStatus(t, narrow.post(`{"operation":"tools.list","cursor":`+jstr(tc.cursor)+`}`), http.StatusUnprocessableEntity, "Invalid discovery cursor")
		})
	}
	t.Run("TheCursorWorksInItsOwnView", func(t *testing.T) {
		full.ok(full.post(`{"operation":"tools.list","cursor":` + jstr(*first.NextCursor) + `}`))
	})
}

// Section 5: the server's own cursors stay within the 1024 characters it accepts, even for
// toolkit and function names of 128 multi-byte characters.
func TestCursorsOfLongMultiByteNamesCanBeSentBack(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("東", 128)
	env := startEnv(t,
		&fakeToolkit{name: long, description: "wide names", functions: []catalog.Function{{Name: long, Description: "one"}, {Name: "x", Description: "two"}}},
		&fakeToolkit{name: "after", description: "after", deferred: true},
	)
	s := open(t, env, func(r *responsev1.OpenResponseRequest) { r.Toolkits, r.ShellMode = []string{long, "after"}, standard })
	items, _ := walk(t, s, "tools.list", 1)
	if len(items) != 3 {
		t.Fatalf("walked %d items, want 3", len(items))
	}
}

// searchMatches is the contract's search rule, as an oracle.
func searchMatches(it item, query, toolkit string) bool {
	if toolkit != "" && it.Toolkit != toolkit {
		return false
	}
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if !strings.Contains(strings.ToLower(it.Toolkit), w) && !strings.Contains(strings.ToLower(it.Function), w) &&
			!strings.Contains(strings.ToLower(it.Description), w) {
			return false
		}
	}
	return true
}

// Section 5: tools.search matches every word case-insensitively, filters by toolkit exactly,
// keeps catalog order and never loads a deferred toolkit.
func TestSearchMatchesEveryWordInCatalogOrder(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	all, _ := walk(t, s, "tools.list", 1000)

	for _, tc := range []struct {
		name, query, toolkit string
		limit                int
		atLeast              int
	}{
		{"OneWordMatches", "echo", "", 20, 1},
		{"UpperCaseMatchesLowerCase", "ECHO", "", 20, 1},
		{"EveryWordMustMatch", "return arguments", "", 20, 1},
		{"WordsMayComeFromDifferentFields", "test unchanged", "", 20, 1},
		{"AWordThatMatchesNothingEmptiesTheResult", "echo zzzyzzy", "", 20, 0},
		{"ExtraWhitespaceIsIgnored", "  echo \t  test ", "", 20, 1},
		{"DeferredToolkitMatchesByDescription", "deferred", "", 20, 1},
		{"ToolkitFilterIsExact", "a", "test", 100, 2},
		{"ToolkitFilterIsNotAPrefix", "echo", "tes", 20, 0},
		{"ToolkitFilterOfUnknownToolkitFindsNothing", "echo", "nope", 20, 0},
		{"LimitBoundsTheResult", "e", "", 1, 1},
		{"SubstringOfAWordMatches", "ech", "", 20, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := fmt.Sprintf(`{"operation":"tools.search","query":%s,"limit":%d}`, jstr(tc.query), tc.limit)
			if tc.toolkit != "" {
				op = fmt.Sprintf(`{"operation":"tools.search","query":%s,"toolkit":%s,"limit":%d}`, jstr(tc.query), jstr(tc.toolkit), tc.limit)
			}
			r := s.ok(s.post(op))
			var res struct {
				Items []json.RawMessage `json:"items"`
			}
			m := decodeObject(t, r.body)
			if len(m) != 1 {
				t.Fatalf("search result has keys %v, want only items", mapKeys(m))
			}
			if err := json.Unmarshal(r.body, &res); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, raw := range all {
				if len(want) < tc.limit && searchMatches(decodeItem(t, raw), tc.query, tc.toolkit) {
					want = append(want, string(raw))
				}
			}
			if got := rawStrings(res.Items); !slices.Equal(got, want) {
				t.Fatalf("search %q in %q: got %v, want %v", tc.query, tc.toolkit, got, want)
			}
			if len(want) < tc.atLeast {
				t.Fatalf("the case expects at least %d matches, the catalog has %d", tc.atLeast, len(want))
			}
		})
	}
	if n := env.Primary.Internals().TestDeferred.Loads(); n != 0 {
		t.Errorf("searching loaded the deferred toolkit %d times", n)
	}
}

// Section 5: a search result over 16 KiB is refused; exactly 16 KiB is served.
func TestSearchResultIsAtMost16KiB(t *testing.T) {
	t.Parallel()
	const maxSearch = 16 * 1024
	// A result of one deferred item is {"items":[ITEM]}, the item's description ending with the
	// command that loads the toolkit; size the description to hit exactly.
	sized := func(name string, total int) *fakeToolkit {
		tk := &fakeToolkit{name: name, deferred: true, description: "zebrafish "}
		hint := " (not loaded yet: `mindroom-agent tools describe " + name + "` loads it and names its functions)"
		item, _ := canonjson.Marshal(map[string]any{"deferred": true, "description": tk.description + hint, "toolkit": name})
		tk.description += strings.Repeat("z", total-len(`{"items":[]}`)-len(item))
		return tk
	}
	env := startEnv(t, append(bulkToolkits(8, 5000), sized("fits_exactly", maxSearch), sized("one_too_many", maxSearch+1))...)
	s := open(t, env)

	t.Run("ResultOfExactly16384BytesIsServed", func(t *testing.T) {
		r := s.ok(s.post(`{"operation":"tools.search","query":"zebrafish","toolkit":"fits_exactly"}`))
		if len(r.body) != maxSearch {
			t.Fatalf("result of %d bytes", len(r.body))
		}
	})
	t.Run("ResultOf16385BytesIsRefused", func(t *testing.T) {
		requireStatus(t, s.post(`{"operation":"tools.search","query":"zebrafish","toolkit":"one_too_many"}`),
			http.StatusUnprocessableEntity, "Tool search exceeds 16 KiB; narrow the query")
	})
	t.Run("ManyLargeMatchesAreRefused", func(t *testing.T) {
		requireStatus(t, s.post(`{"operation":"tools.search","query":"bulk","limit":100}`),
			http.StatusUnprocessableEntity, "Tool search exceeds 16 KiB; narrow the query")
	})
	t.Run("ANarrowerQueryIsServed", func(t *testing.T) {
		s.ok(s.post(`{"operation":"tools.search","query":"bulk second"}`))
	})
}

// Section 5: listing and searching never load a deferred toolkit; the first describe or call
// loads it once, concurrent first describes included; afterwards its functions are listed.
func TestDeferredToolkitLoadsOnceOnFirstDescribeOrCall(t *testing.T) {
	t.Parallel()
	t.Run("ListAndSearchLeaveItUnloadedAndDescribeLoadsItOnce", func(t *testing.T) {
		t.Parallel()
		env := startEnv(t)
		s := open(t, env)
		walk(t, s, "tools.list", 1)
		s.ok(s.post(`{"operation":"tools.search","query":"ping add deferred"}`))
		s.ok(s.post(`{"operation":"tools.search","query":"ping","toolkit":"test_deferred"}`))
		if n := env.Primary.Internals().TestDeferred.Loads(); n != 0 {
			t.Fatalf("discovery loaded it %d times", n)
		}
		s.ok(s.post(describeOp("test_deferred", "ping")))
		s.ok(s.post(describeOp("test_deferred", "add")))
		if n := env.Primary.Internals().TestDeferred.Loads(); n != 1 {
			t.Fatalf("loaded %d times, want 1", n)
		}
		items, _ := walk(t, s, "tools.list", 1000)
		var fns []string
		for _, raw := range items {
			if it := decodeItem(t, raw); it.Toolkit == "test_deferred" {
				if it.Deferred {
					t.Fatalf("still listed as deferred after loading: %s", raw)
				}
				fns = append(fns, it.Function)
			}
		}
		if !slices.Equal(fns, []string{"ping", "add"}) {
			t.Fatalf("test_deferred functions %v", fns)
		}
	})
	t.Run("ConcurrentFirstDescribesLoadItOnce", func(t *testing.T) {
		t.Parallel()
		env := startEnv(t)
		s := open(t, env)
		const n = 16
		bodies := make([]reply, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				bodies[i], errs[i] = s.send(http.MethodPost, operationsPath, strings.NewReader(describeOp("test_deferred", "add")))
			})
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			s.ok(bodies[i])
			if string(bodies[i].body) != string(bodies[0].body) {
				t.Fatalf("describes differ: %s vs %s", bodies[i].body, bodies[0].body)
			}
		}
		if got := env.Primary.Internals().TestDeferred.Loads(); got != 1 {
			t.Fatalf("loaded %d times, want 1", got)
		}
	})
	t.Run("FirstCallLoadsItOnce", func(t *testing.T) {
		t.Parallel()
		env := startEnv(t)
		s := open(t, env)
		a := s.call("test_deferred", "add", `{"a":2,"b":40}`)
		b := s.call("test_deferred", "ping", `{}`)
		if done := s.await(a.CallID); done.Status != "completed" || string(done.Outcome) != `{"sum":42}` {
			t.Fatalf("add: %s", done.raw)
		}
		if done := s.await(b.CallID); done.Status != "completed" || string(done.Outcome) != `{"pong":true}` {
			t.Fatalf("ping: %s", done.raw)
		}
		if got := env.Primary.Internals().TestDeferred.Loads(); got != 1 {
			t.Fatalf("loaded %d times, want 1", got)
		}
	})
}

// Section 5: describe's shape, instruction order and refusals that name what exists.
func TestDescribeShowsSchemaAndInstructions(t *testing.T) {
	t.Parallel()
	env := startEnv(t, &fakeToolkit{
		name: "guide", description: "Has instructions.", instructions: []string{"toolkit first", "toolkit second"},
		functions: []catalog.Function{{
			Name: "step", Description: "One step.", Instructions: []string{"function last"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		}},
	})
	s := open(t, env)

	t.Run("DescribeHasExactlyFiveKeys", func(t *testing.T) {
		m := decodeObject(t, s.ok(s.post(describeOp("test", "sleep"))).body)
		got := mapKeys(m)
		slices.Sort(got)
		if want := []string{"description", "function", "input_schema", "instructions", "toolkit"}; !slices.Equal(got, want) {
			t.Fatalf("keys %v, want %v", got, want)
		}
		if m["toolkit"] != "test" || m["function"] != "sleep" || m["description"] != "Sleep for the given number of seconds, then report how long." {
			t.Fatalf("describe %v", m)
		}
		schema, _ := canonjson.Marshal(m["input_schema"])
		want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"seconds":{"description":"How long to sleep.","maximum":600,"minimum":0,"type":"number"}},"required":["seconds"],"type":"object"}`
		if string(schema) != want {
			t.Fatalf("input_schema %s\nwant %s", schema, want)
		}
	})
	t.Run("InstructionsAreToolkitsThenFunctions", func(t *testing.T) {
		m := decodeObject(t, s.ok(s.post(describeOp("guide", "step"))).body)
		got, _ := canonjson.Marshal(m["instructions"])
		if string(got) != `["toolkit first","toolkit second","function last"]` {
			t.Fatalf("instructions %s", got)
		}
	})
	t.Run("UnknownToolkitIsRefusedNamingTheToolkits", func(t *testing.T) {
		r := s.post(describeOp("nope", "echo"))
		requireStatus(t, r, http.StatusUnprocessableEntity, "nope")
		for _, name := range []string{"guide", "shell", "test", "test_deferred"} {
			requireStatus(t, r, http.StatusUnprocessableEntity, name)
		}
	})
	t.Run("UnknownFunctionIsRefusedNamingTheFunctions", func(t *testing.T) {
		r := s.post(describeOp("test", "nope"))
		for _, name := range []string{"nope", "echo", "huge_schema", "identity"} {
			requireStatus(t, r, http.StatusUnprocessableEntity, name)
		}
	})
	t.Run("UnknownFunctionOfADeferredToolkitNamesItsFunctions", func(t *testing.T) {
		r := s.post(describeOp("test_deferred", "nope"))
		for _, name := range []string{"ping", "add"} {
			requireStatus(t, r, http.StatusUnprocessableEntity, name)
		}
	})
}

// readDocument reads a context document page by page with limit and returns its text and pages.
func readDocument(t testing.TB, s *session, name string, limit int) (string, [][]byte) {
	t.Helper()
	var text strings.Builder
	var pages [][]byte
	offset := 0
	for {
		r := s.ok(s.post(fmt.Sprintf(`{"operation":"context.read","name":%s,"offset":%d,"limit":%d}`, jstr(name), offset, limit)))
		if len(r.body) > maxBody {
			t.Fatalf("context.read page of %d bytes", len(r.body))
		}
		var p struct {
			Name       string `json:"name"`
			NextOffset *int   `json:"next_offset"`
			Text       string `json:"text"`
		}
		m := decodeObject(t, r.body)
		if len(m) != 3 {
			t.Fatalf("context.read keys %v", mapKeys(m))
		}
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
		if p.Name != name || len([]rune(p.Text)) > limit {
			t.Fatalf("page %s", r.body)
		}
		text.WriteString(p.Text)
		pages = append(pages, r.body)
		if p.NextOffset == nil {
			return text.String(), pages
		}
		if *p.NextOffset != offset+len([]rune(p.Text)) || *p.NextOffset <= offset {
			t.Fatalf("next_offset %d after reading %d code points from %d", *p.NextOffset, len([]rune(p.Text)), offset)
		}
		offset = *p.NextOffset
	}
}

// Section 5: a descriptor over 32 KiB becomes a context document that pages back exactly.
func TestHugeDescriptorBecomesAContextDocument(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	r := s.ok(s.post(describeOp("test", "huge_schema")))
	var ptr struct {
		Context struct {
			Length    int    `json:"length"`
			Name      string `json:"name"`
			Operation string `json:"operation"`
		} `json:"context"`
		Function string `json:"function"`
		Toolkit  string `json:"toolkit"`
	}
	dec := json.NewDecoder(strings.NewReader(string(r.body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ptr); err != nil {
		t.Fatalf("pointer %s: %v", r.body, err)
	}
	want := fmt.Sprintf(`{"context":{"length":%d,"name":"tool-schema-1","operation":"context.read"},"function":"huge_schema","toolkit":"test"}`, ptr.Context.Length)
	if string(r.body) != want {
		t.Fatalf("pointer %s\nwant %s", r.body, want)
	}

	t.Run("ContextListListsTheDocument", func(t *testing.T) {
		items, _ := walk(t, s, "context.list", 100)
		want := fmt.Sprintf(`{"length":%d,"name":"tool-schema-1"}`, ptr.Context.Length)
		if !slices.Equal(rawStrings(items), []string{want}) {
			t.Fatalf("context items %v, want [%s]", rawStrings(items), want)
		}
	})
	var descriptor string
	for _, limit := range []int{8000, 1000, 65536} {
		t.Run(fmt.Sprintf("ReadingWithLimit%dReconstructsTheDescriptor", limit), func(t *testing.T) {
			text, pages := readDocument(t, s, "tool-schema-1", limit)
			if len([]rune(text)) != ptr.Context.Length {
				t.Fatalf("read %d code points, length says %d", len([]rune(text)), ptr.Context.Length)
			}
			if limit == 8000 && len(pages) < 2 {
				t.Fatalf("a %d code point document came back in %d pages of 8000", len(text), len(pages))
			}
			if descriptor == "" {
				descriptor = text
			} else if text != descriptor {
				t.Fatal("reading with another limit gave another text")
			}
		})
	}
	t.Run("TheDocumentIsTheCanonicalDescriptor", func(t *testing.T) {
		if len(descriptor) <= 32*1024 {
			t.Fatalf("descriptor of %d bytes should not have been moved out of line", len(descriptor))
		}
		m := decodeObject(t, []byte(descriptor))
		got := mapKeys(m)
		slices.Sort(got)
		if want := []string{"description", "function", "input_schema", "instructions", "toolkit"}; !slices.Equal(got, want) {
			t.Fatalf("descriptor keys %v", got)
		}
		props, _ := m["input_schema"].(map[string]any)["properties"].(map[string]any)
		if m["toolkit"] != "test" || m["function"] != "huge_schema" || len(props) != 400 || props["option_400"] == nil {
			t.Fatalf("descriptor is not huge_schema's: toolkit %v function %v, %d properties", m["toolkit"], m["function"], len(props))
		}
	})
	t.Run("ARuntimeDocumentOfTheSameNameIsKept", func(t *testing.T) {
		other := open(t, env, func(r *responsev1.OpenResponseRequest) {
			r.ContextDocuments = []*responsev1.ContextDocument{{Name: "tool-schema-1", Text: "the runtime's own"}}
		})
		m := decodeObject(t, other.ok(other.post(describeOp("test", "huge_schema"))).body)
		name, _ := m["context"].(map[string]any)["name"].(string)
		if name == "" || name == "tool-schema-1" {
			t.Fatalf("pointer names %q", name)
		}
		if text, _ := readDocument(t, other, "tool-schema-1", 8000); text != "the runtime's own" {
			t.Fatalf("the runtime's document now reads %.40q", text)
		}
		if text, _ := readDocument(t, other, name, 65536); text != descriptor {
			t.Fatalf("%s is not the descriptor", name)
		}
	})
	t.Run("DescribingAgainReusesTheDocument", func(t *testing.T) {
		if again := s.ok(s.post(describeOp("test", "huge_schema"))); string(again.body) != string(r.body) {
			t.Fatalf("second describe %s", again.body)
		}
		if items, _ := walk(t, s, "context.list", 100); len(items) != 1 {
			t.Fatalf("%d context documents after describing twice", len(items))
		}
	})
}

// Section 5: context.list and context.read over the response's documents.
func TestContextDocumentsListAndReadInPages(t *testing.T) {
	t.Parallel()
	readOverhead := len(`{"name":"edge","next_offset":null,"text":""}`)
	docs := []*responsev1.ContextDocument{
		{Name: "notes", Text: "héllo wörld"},
		{Name: "empty", Text: ""},
		{Name: "edge", Text: strings.Repeat("e", maxBody-readOverhead)},
		{Name: "edge2", Text: strings.Repeat("e", maxBody-readOverhead+1)},
		{Name: "quotes", Text: strings.Repeat(`"`, 40000)},
		{Name: "wide", Text: strings.Repeat("😀", 20000)},
		{Name: "controls", Text: strings.Repeat("\x01", 20000)},
	}
	env := startEnv(t)
	s := open(t, env, func(r *responsev1.OpenResponseRequest) { r.ContextDocuments = docs })

	t.Run("ListShowsEveryDocumentWithItsLengthInCodePoints", func(t *testing.T) {
		for _, limit := range []int{1, 2, 1000} {
			items, _ := walk(t, s, "context.list", limit)
			var want []string
			for _, d := range docs {
				want = append(want, fmt.Sprintf(`{"length":%d,"name":%s}`, len([]rune(d.Text)), jstr(d.Name)))
			}
			if !slices.Equal(rawStrings(items), want) {
				t.Fatalf("limit %d: items %v, want %v", limit, rawStrings(items), want)
			}
		}
	})
	t.Run("LimitAndOffsetCountCodePoints", func(t *testing.T) {
		r := s.ok(s.post(`{"operation":"context.read","name":"notes","limit":3}`))
		if string(r.body) != `{"name":"notes","next_offset":3,"text":"hél"}` {
			t.Fatalf("got %s", r.body)
		}
		r = s.ok(s.post(`{"operation":"context.read","name":"notes","offset":3}`))
		if string(r.body) != `{"name":"notes","next_offset":null,"text":"lo wörld"}` {
			t.Fatalf("got %s", r.body)
		}
	})
	t.Run("ReadingAtTheEndGivesEmptyText", func(t *testing.T) {
		r := s.ok(s.post(`{"operation":"context.read","name":"notes","offset":11}`))
		if string(r.body) != `{"name":"notes","next_offset":null,"text":""}` {
			t.Fatalf("got %s", r.body)
		}
		r = s.ok(s.post(`{"operation":"context.read","name":"empty"}`))
		if string(r.body) != `{"name":"empty","next_offset":null,"text":""}` {
			t.Fatalf("got %s", r.body)
		}
	})
	t.Run("ReadingPastTheEndIsRefused", func(t *testing.T) {
		requireStatus(t, s.post(`{"operation":"context.read","name":"notes","offset":12}`), http.StatusUnprocessableEntity, "")
	})
	t.Run("PageOfExactly64KiBIsOnePage", func(t *testing.T) {
		text, pages := readDocument(t, s, "edge", 65536)
		if len(pages) != 1 || len(pages[0]) != maxBody || text != docs[2].Text {
			t.Fatalf("%d pages, first of %d bytes", len(pages), len(pages[0]))
		}
	})
	for _, d := range docs[3:] {
		t.Run("Document"+d.Name+"PagesWithin64KiBAndReadsBackExactly", func(t *testing.T) {
			for _, limit := range []int{65536, 8000} {
				text, pages := readDocument(t, s, d.Name, limit)
				if text != d.Text {
					t.Fatalf("limit %d: read back %d bytes, want %d", limit, len(text), len(d.Text))
				}
				if limit == 65536 && len(pages) < 2 {
					t.Fatalf("a document whose JSON exceeds 64 KiB came back in one page")
				}
				for i, p := range pages[:len(pages)-1] {
					if limit == 65536 && len(p) < maxBody/2 {
						t.Fatalf("limit %d: page %d of %d holds only %d bytes: a page shrinks only as far as it must", limit, i, len(pages), len(p))
					}
				}
			}
		})
	}
	t.Run("UnknownDocumentIsUnavailable", func(t *testing.T) {
		requireStatus(t, s.post(`{"operation":"context.read","name":"nope"}`), http.StatusUnprocessableEntity, "Context document is unavailable")
	})
	t.Run("BadContextCursorIsRefused", func(t *testing.T) {
		requireStatus(t, s.post(`{"operation":"context.list","cursor":"!!!"}`), http.StatusUnprocessableEntity, "Invalid discovery cursor")
		requireStatus(t, s.post(`{"operation":"context.list","cursor":"bm9wZQ"}`), http.StatusUnprocessableEntity, "Invalid discovery cursor")
	})
	t.Run("ContextNeedsNoWindow", func(t *testing.T) {
		s.ok(s.post(`{"operation":"context.list"}`, withoutWindow()))
		s.ok(s.post(`{"operation":"context.read","name":"notes"}`, withoutWindow()))
	})
}
