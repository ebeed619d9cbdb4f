package jobproc

import "testing"

func TestParseProcStat(t *testing.T) {
	rest := " 1 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100"
	cases := []struct {
		name  string
		line  string
		want  procStat
		error bool
	}{
		{name: "PlainName", line: "42 (bash) S" + rest, want: procStat{state: 'S', start: 987654}},
		{name: "NameWithSpacesAndParentheses", line: "42 (a) Z (b) R" + rest, want: procStat{state: 'R', start: 987654}},
		{name: "NoParenthesisIsMalformed", line: "42 bash S" + rest, error: true},
		{name: "TooFewFieldsIsMalformed", line: "42 (bash) S 1 2", error: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseProcStat(c.line)
			if (err != nil) != c.error || got != c.want {
				t.Errorf("parseProcStat = %+v, %v; want %+v (error %v)", got, err, c.want, c.error)
			}
		})
	}
}
