package edit

import (
	"strings"
	"testing"
)

func TestNumbered(t *testing.T) {
	twelve := numberedFile(12, nil)
	tests := []struct {
		name string
		text string
		opts NumberOptions
		want string
	}{
		{
			name: "whole file",
			text: "package main\n\nfunc main() {}\n",
			want: "   1 | package main\n   2 |\n   3 | func main() {}\n",
		},
		{
			name: "range",
			text: twelve,
			opts: NumberOptions{From: 9, To: 11},
			want: "   9 | line 9\n  10 | line 10\n  11 | line 11\n",
		},
		{
			name: "to 0 reads to the end",
			text: twelve,
			opts: NumberOptions{From: 11},
			want: "  11 | line 11\n  12 | line 12\n",
		},
		{
			name: "to past the end stops at the end",
			text: "a\nb",
			opts: NumberOptions{From: 2, To: 50},
			want: "   2 | b\n",
		},
		{
			name: "cut after max lines names the next range to request",
			text: twelve,
			opts: NumberOptions{From: 2, MaxLines: 4},
			want: "   2 | line 2\n   3 | line 3\n   4 | line 4\n   5 | line 5\n" +
				"[... 7 more lines; request them with [READ_FILE path=\"src/a.go\" lines=\"6-9\"] ...]\n",
		},
		{
			name: "cut inside a range asks for the rest of the range only",
			text: twelve,
			opts: NumberOptions{From: 1, To: 6, MaxLines: 4},
			want: "   1 | line 1\n   2 | line 2\n   3 | line 3\n   4 | line 4\n" +
				"[... 2 more lines; request them with [READ_FILE path=\"src/a.go\" lines=\"5-6\"] ...]\n",
		},
		{
			name: "wide numbers widen the column",
			text: numberedFile(10000, nil),
			opts: NumberOptions{From: 9999},
			want: " 9999 | line 9999\n10000 | line 10000\n",
		},
		{
			name: "CRs are not shown",
			text: "a\r\nb\r\n",
			want: "   1 | a\n   2 | b\n",
		},
		{
			name: "long lines are cut",
			text: "short\n" + strings.Repeat("x", 30) + "é\n",
			opts: NumberOptions{MaxLineLen: 10},
			want: "   1 | short\n   2 | xxxxxxxxxx [... 21 more characters]\n",
		},
		{name: "empty file", text: "", want: "[empty file]\n"},
		{name: "start past the end", text: "a\nb\n", opts: NumberOptions{From: 5}, want: "[the file has only 2 lines; nothing at line 5]\n"},
		{name: "reversed range", text: twelve, opts: NumberOptions{From: 5, To: 3}, want: "[no lines: 5 is after 3]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Numbered("src/a.go", tt.text, tt.opts); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestNumberedRoundTrip checks that a search text copied from a listing,
// numbers and all, still applies.
func TestNumberedRoundTrip(t *testing.T) {
	listing := Numbered("main.go", goFile, NumberOptions{From: 2, To: 4})
	got, err := SearchReplace(goFile, pairs(listing, "\nfunc main() {\n\tx := 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(goFile, "x := 1", "x := 7", 1); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
