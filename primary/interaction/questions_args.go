package interaction

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Readers of the structured arguments of ask_questions and report_progress (and of answers
// people give), which the tools check field by field so every refusal names the field and the
// rule it breaks. Values are those of a strict JSON parse: map[string]any, []any, string, bool,
// nil and numbers.

// fieldObject is a JSON object being read; path names it in messages ("" for the arguments
// themselves, "steps[2]" for an element).
type fieldObject struct {
	path string
	m    map[string]any
}

// readObject reads v, found at path, as an object.
func readObject(path string, v any) (fieldObject, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return fieldObject{}, fmt.Errorf("%s must be an object", path)
	}
	return fieldObject{path: path, m: m}, nil
}

// at names a field of the object.
func (o fieldObject) at(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// only refuses a key outside keys (listed in the message as what the object may hold).
func (o fieldObject) only(what string, keys ...string) error {
	var unknown []string
	for k := range o.m {
		if !slices.Contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	if o.path == "" {
		return fmt.Errorf("unknown argument %q; %s takes only %s", unknown[0], what, strings.Join(keys, ", "))
	}
	return fmt.Errorf("%s has the unknown key %q; %s has only the keys %s", o.path, unknown[0], what, strings.Join(keys, ", "))
}

// str returns a string field, "" when absent.
func (o fieldObject) str(key string) (string, error) {
	v, ok := o.m[key]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string", o.at(key))
	}
	return s, nil
}

// text returns a string field trimmed, refusing one whose trimmed length is outside
// least..most characters (least 0: optional).
func (o fieldObject) text(key string, least, most int) (string, error) {
	s, err := o.str(key)
	if err != nil {
		return "", err
	}
	s = strings.TrimSpace(s)
	if n := utf8.RuneCountInString(s); n < least || n > most {
		return "", lengthRule(o.at(key), least, most)
	}
	return s, nil
}

// lengthRule is the refusal of a text of the wrong length.
func lengthRule(field string, least, most int) error {
	if least == 0 {
		return fmt.Errorf("%s must be at most %d characters after trimming", field, most)
	}
	return fmt.Errorf("%s must be %d..%d characters after trimming", field, least, most)
}

// array returns an array field; present is false when it is absent.
func (o fieldObject) array(key string) (a []any, present bool, err error) {
	v, ok := o.m[key]
	if !ok {
		return nil, false, nil
	}
	a, ok = v.([]any)
	if !ok {
		return nil, true, fmt.Errorf("%s must be an array", o.at(key))
	}
	return a, true, nil
}

// boolean returns a boolean field, def when absent.
func (o fieldObject) boolean(key string, def bool) (bool, error) {
	v, ok := o.m[key]
	if !ok {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s must be true or false", o.at(key))
	}
	return b, nil
}

// elemPath names element i of the array at path.
func elemPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }
