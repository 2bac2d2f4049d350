package edit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

// searchReplace is ApplyEdits failing on a pair already applied: the
// errors of every pair show.
func searchReplace(content string, edits []command.Edit) (string, error) {
	a, err := ApplyEdits(content, edits)
	if err == nil && len(a.Skipped) > 0 {
		n := a.Skipped[0]
		_, _, err = applyPair(content, edits[n-1], n)
	}
	if err != nil {
		return content, err
	}
	return a.Text, nil
}

// pairs builds edits from alternating search and replace texts.
func pairs(sr ...string) []command.Edit {
	var out []command.Edit
	for i := 0; i+1 < len(sr); i += 2 {
		out = append(out, command.Edit{Search: sr[i], Replace: sr[i+1]})
	}
	return out
}

const goFile = "package main\n\nfunc main() {\n\tx := 1\n\tif x > 0 {\n\t\tprintln(x)\n\t}\n}\n"

func TestSearchReplaceApplies(t *testing.T) {
	tests := []struct {
		name    string
		content string
		edits   []command.Edit
		want    string
		note    string // expected in Applied.Notes; "" for none
	}{
		{
			name:    "exact text inside a line",
			content: goFile,
			edits:   pairs("x := 1", "x := 2"),
			want:    strings.Replace(goFile, "x := 1", "x := 2", 1),
		},
		{
			name:    "exact lines",
			content: goFile,
			edits:   pairs("\tif x > 0 {\n\t\tprintln(x)\n\t}\n", "\tprintln(x + 1)\n"),
			want:    "package main\n\nfunc main() {\n\tx := 1\n\tprintln(x + 1)\n}\n",
		},
		{
			name:    "pairs apply in order, each to the previous result",
			content: "a\nb\nc\n",
			edits:   pairs("a\n", "A\nnew\n", "new\nb", "B"),
			want:    "A\nB\nc\n",
		},
		{
			name:    "search text is the whole file",
			content: "one\ntwo\n",
			edits:   pairs("one\ntwo\n", "three\n"),
			want:    "three\n",
		},
		{
			name:    "file lines carry trailing whitespace",
			content: "a  \nb\t\nc\n",
			edits:   pairs("a\nb", "x\ny"),
			want:    "x\ny\nc\n",
			note:    "edit 1 matched line 1 only after ignoring trailing whitespace",
		},
		{
			name:    "search lines carry trailing whitespace",
			content: "a\nb\nc\n",
			edits:   pairs("b   \nc ", "B\nC"),
			want:    "a\nB\nC\n",
			note:    "edit 1 matched line 2 only after ignoring trailing whitespace",
		},
		{
			name:    "search indented less than the file: replacement shifted in",
			content: goFile,
			edits:   pairs("if x > 0 {\n\tprintln(x)\n}", "if x > 1 {\n\tprintln(x)\n\treturn\n}"),
			want:    "package main\n\nfunc main() {\n\tx := 1\n\tif x > 1 {\n\t\tprintln(x)\n\t\treturn\n\t}\n}\n",
			note:    "edit 1 matched line 5 only after allowing for the file being indented 4 columns deeper (the replacement was indented the same way)",
		},
		{
			name:    "search indented more than the file: replacement shifted out",
			content: "def f():\n    return 1\n\ndef g():\n    return 2\n",
			edits:   pairs("        def g():\n            return 2", "        def g():\n            return 3"),
			want:    "def f():\n    return 1\n\ndef g():\n    return 3\n",
			note:    "edit 1 matched line 4 only after allowing for the file being indented 8 columns less (the replacement was indented the same way)",
		},
		{
			name:    "spaces in search, tabs in file: replacement written with tabs",
			content: goFile,
			edits:   pairs("    x := 1\n    if x > 0 {", "    x := 2\n    if x > 1 {\n      // aligned"),
			want:    "package main\n\nfunc main() {\n\tx := 2\n\tif x > 1 {\n\t  // aligned\n\t\tprintln(x)\n\t}\n}\n",
			note:    "edit 1 matched line 4 only after allowing for tabs and spaces being swapped (the replacement was indented like the file)",
		},
		{
			name:    "spurious blank first line in search and replace",
			content: "a\nb\nc\n",
			edits:   pairs("\nb\nc\n\n", "\nB\nc\n\n"),
			want:    "a\nB\nc\n",
			note:    "edit 1 matched line 2 only after dropping blank lines at the start or end of the search text",
		},
		{
			name:    "spurious blank last line in search only",
			content: "a\nb\nc",
			edits:   pairs("b\nc\n\n", "B\nC"),
			want:    "a\nB\nC",
			note:    "edit 1 matched line 2 only after dropping blank lines at the start or end of the search text",
		},
		{
			name:    "deleting lines found after dropping a blank edge",
			content: "a\nfoo\nb\n",
			edits:   pairs("\n\nfoo\n", ""),
			want:    "a\nb\n",
			note:    "after dropping blank lines",
		},
		{
			name:    "CRLF file, LF search: replacement written with CRLF",
			content: "a\r\nb\r\nc\r\n",
			edits:   pairs("b\nc\n", "B\nC\nD\n"),
			want:    "a\r\nB\r\nC\r\nD\r\n",
		},
		{
			name:    "LF file, CRLF search and replacement",
			content: "a\nb\nc\n",
			edits:   pairs("a\r\nb\r\n", "x\r\n"),
			want:    "x\nc\n",
		},
		{
			name:    "mixed line endings: CRLF lines match, new lines take the usual ending",
			content: "a\nb\r\nc\n",
			edits:   pairs("b\nc", "B\nC"),
			want:    "a\nB\nC\n",
			note:    "edit 1 matched line 2 only after ignoring trailing whitespace",
		},
		{
			name:    "line numbers copied from a numbered listing",
			content: goFile,
			edits:   pairs("   4 | \tx := 1\n   5 | \tif x > 0 {", "   4 | \tx := 5\n   5 | \tif x > 0 {"),
			want:    strings.Replace(goFile, "x := 1", "x := 5", 1),
			note:    "edit 1 matched line 4 only after removing line numbers copied from a numbered listing",
		},
		{
			name:    "empty search on an empty file sets the content",
			content: "",
			edits:   pairs("", "hello\n"),
			want:    "hello\n",
		},
		{
			name:    "blank search on a blank file sets the content",
			content: "\n\n",
			edits:   pairs("\n", "hello\n"),
			want:    "hello\n",
		},
		{
			name:    "empty replacement deletes whole lines",
			content: "a\nb\nc\n",
			edits:   pairs("b \n", ""),
			want:    "a\nc\n",
			note:    "ignoring trailing whitespace",
		},
		{
			name:    "deleting the unterminated last line keeps the file unterminated",
			content: "a\nb\nc",
			edits:   pairs("c ", ""),
			want:    "a\nb",
			note:    "ignoring trailing whitespace",
		},
		{
			name:    "replacing the unterminated last line keeps the file unterminated",
			content: "a\nb\nc",
			edits:   pairs("c\t\n", "C\nD\n"),
			want:    "a\nb\nC\nD",
			note:    "ignoring trailing whitespace",
		},
		{
			name:    "first line copied without its indentation",
			content: goFile,
			edits:   pairs("if x > 0 {\n\t\tprintln(x)\n\t}", "if x > 1 {\n\t\tprintln(x)\n\t}"),
			want:    strings.Replace(goFile, "x > 0", "x > 1", 1),
		},
		{
			name:    "insertion whose replacement keeps the anchor",
			content: "import (\n\t\"fmt\"\n)\n",
			edits:   pairs("\t\"fmt\"\n", "\t\"fmt\"\n\t\"os\"\n"),
			want:    "import (\n\t\"fmt\"\n\t\"os\"\n)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := searchReplace(tt.content, tt.edits)
			if err != nil {
				t.Fatalf("SearchReplace: %v", err)
			}
			if got != tt.want {
				t.Errorf("SearchReplace =\n%q\nwant\n%q", got, tt.want)
			}
			a, err := ApplyEdits(tt.content, tt.edits)
			if err != nil {
				t.Fatalf("ApplyEdits: %v", err)
			}
			if a.Text != tt.want {
				t.Errorf("ApplyEdits text = %q, want %q", a.Text, tt.want)
			}
			notes := strings.Join(a.Notes, "\n")
			if tt.note == "" && notes != "" || !strings.Contains(notes, tt.note) {
				t.Errorf("notes = %q, want %q", notes, tt.note)
			}
		})
	}
}

// numberedFile returns n lines "line 1".."line n" with some lines replaced.
func numberedFile(n int, set map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := set[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestSearchReplaceErrors(t *testing.T) {
	dup := numberedFile(100, map[int]string{10: "dup()", 42: "dup()", 88: "dup()"})
	tests := []struct {
		name    string
		content string
		edits   []command.Edit
		msg     string // the whole Error() text
	}{
		{
			name:    "no pairs",
			content: "a\n",
			msg:     "the edit has no search/replace pairs; send at least one search text and its replacement",
		},
		{
			name:    "empty search on a file with content",
			content: "a\n",
			edits:   pairs("", "b\n"),
			msg:     "search text of edit 1 is empty, but the file is not; put the lines to change in the search text, or write the whole file anew",
		},
		{
			name:    "several matches are named by line",
			content: dup,
			edits:   pairs("line 1\n", "line one\n", "dup()", "once()"),
			msg:     "search text of edit 2 matches 3 places (lines 10, 42, 88); add surrounding lines to make it unique",
		},
		{
			name:    "many matches are listed up to ten",
			content: strings.Repeat("x()\n", 12),
			edits:   pairs("x()", "y()"),
			msg:     "search text of edit 1 matches 12 places (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more); add surrounding lines to make it unique",
		},
		{
			name:    "several matches on one line",
			content: "aaa\n",
			edits:   pairs("aa", "b"),
			msg:     "search text of edit 1 matches 2 places (all on line 1); add surrounding lines to make it unique",
		},
		{
			name:    "several tolerant matches",
			content: "x  \ny\nx \ny\n",
			edits:   pairs("x\ny", "z"),
			msg:     "search text of edit 1 matches 2 places (lines 1, 3); add surrounding lines to make it unique",
		},
		{
			name:    "already applied",
			content: numberedFile(20, map[int]string{12: "done := true"}),
			edits:   pairs("done := false", "done := true"),
			msg:     "edit 1 seems already applied: the replacement text is already at line 12",
		},
		{
			name:    "insertion already made",
			content: "import (\n\t\"fmt\"\n\t\"os\"\n)\n",
			edits:   pairs("\t\"fmt\"\n", "\t\"fmt\"\n\t\"os\"\n"),
			msg:     "edit 1 seems already applied: the replacement text is already at line 2",
		},
		{
			name:    "not found shows the most similar lines",
			content: numberedFile(30, map[int]string{14: "func add(a, b int) int {", 15: "\treturn a + b", 16: "}"}),
			edits:   pairs("func add(a, b int) int {\n\treturn a - b\n}", "func add(a, b int) int {\n\treturn b + a\n}"),
			msg: "search text of edit 1 was not found in the file\n" +
				"the most similar part of the file is lines 14-16:\n" +
				"  14 | func add(a, b int) int {\n" +
				"  15 | \treturn a + b\n" +
				"  16 | }\n" +
				"the first difference is at line 15: the file has `return a + b` where your search text has `return a - b`\n" +
				"copy the search text exactly from the file as it is now",
		},
		{
			name:    "not found: a misspelt name points at the right function, not an earlier look-alike",
			content: "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
			edits:   pairs("def mull(a, b):\n    return a ** b\n", "x\n"),
			msg: "search text of edit 1 was not found in the file\n" +
				"the most similar part of the file is lines 5-6:\n" +
				"   5 | def mul(a, b):\n" +
				"   6 |     return a * b\n" +
				"the first difference is at line 5: the file has `def mul(a, b):` where your search text has `def mull(a, b):`\n" +
				"copy the search text exactly from the file as it is now",
		},
		{
			name:    "not found, differing only in uneven indentation",
			content: "if a {\n    b()\n        c()\n}\n",
			edits:   pairs("if a {\n  b()\n  c()\n}", "x"),
			msg: "search text of edit 1 was not found in the file\n" +
				"the most similar part of the file is lines 1-4:\n" +
				"   1 | if a {\n" +
				"   2 |     b()\n" +
				"   3 |         c()\n" +
				"   4 | }\n" +
				"these lines differ from your search text only in whitespace (inside lines, or indentation that is not shifted evenly)\n" +
				"copy the search text exactly from the file as it is now",
		},
		{
			name:    "not found and nothing alike, deletion",
			content: "alpha\nbeta\n",
			edits:   pairs("gamma()", ""),
			msg: "search text of edit 1 was not found in the file\n" +
				"no part of the file resembles it; read the file again and copy the search text from it\n" +
				"(if this text was already removed, this edit is not needed)",
		},
		{
			name:    "line numbers after earlier pairs are flagged",
			content: "a\nb\nb\n",
			edits:   pairs("a\n", "a\nx\ny\n", "b\n", "c\n"),
			msg: "search text of edit 2 matches 2 places (lines 4, 5); add surrounding lines to make it unique\n" +
				"(line numbers count the file after the earlier pairs of this edit were applied)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := searchReplace(tt.content, tt.edits)
			if err == nil {
				t.Fatalf("SearchReplace succeeded with %q", got)
			}
			if got != tt.content {
				t.Errorf("content changed on error: %q", got)
			}
			if err.Error() != tt.msg {
				t.Errorf("error text:\n%s\nwant:\n%s", err, tt.msg)
			}
		})
	}
}

func TestSearchReplaceAllOrNothing(t *testing.T) {
	content := "a\nb\nc\n"
	got, err := searchReplace(content, pairs("a", "A", "b", "B", "zzz", "Z"))
	if err == nil || !strings.Contains(err.Error(), "was not found") {
		t.Fatalf("err = %v, want not found", err)
	}
	if got != content {
		t.Errorf("got %q, want the original %q", got, content)
	}
	a, err := ApplyEdits(content, pairs("a", "A", "zzz", "Z"))
	if err == nil || a.Text != content {
		t.Errorf("ApplyEdits = %q, %v; want the original and an error", a.Text, err)
	}
}

func TestApplyEditsSkipsAppliedPairs(t *testing.T) {
	content := "x := 2\ny := 1\n"
	edits := pairs("x := 1", "x := 2", "y := 1", "y := 2")
	if _, err := searchReplace(content, edits); err == nil || !strings.Contains(err.Error(), "seems already applied") {
		t.Fatalf("SearchReplace err = %v, want already applied", err)
	}
	a, err := ApplyEdits(content, edits)
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != "x := 2\ny := 2\n" {
		t.Errorf("text = %q", a.Text)
	}
	if len(a.Skipped) != 1 || a.Skipped[0] != 1 {
		t.Errorf("Skipped = %v, want [1]", a.Skipped)
	}
	want := "edit 1 seems already applied: the replacement text is already at line 1; skipped it"
	if len(a.Notes) != 1 || a.Notes[0] != want {
		t.Errorf("Notes = %q, want %q", a.Notes, want)
	}
	// Running the same block again changes nothing and fails nothing.
	again, err := ApplyEdits(a.Text, edits)
	if err != nil || again.Text != a.Text || len(again.Skipped) != 2 {
		t.Errorf("second run = %+v, %v; want unchanged text and both pairs skipped", again, err)
	}
}

// bigFile is a 10,000-line Go-like file whose lines are all different.
func bigFile() []string {
	lines := make([]string, 0, 10000)
	for i := range 10000 / 5 {
		lines = append(lines,
			fmt.Sprintf("func handler%d(w http.ResponseWriter, r *http.Request) {", i),
			fmt.Sprintf("\tid := r.URL.Query().Get(\"id%d\")", i),
			fmt.Sprintf("\tlog.Printf(\"handling %%s in %d\", id)", i),
			fmt.Sprintf("\tw.WriteHeader(%d)", 200+i%300),
			"}")
	}
	return lines
}

func BenchmarkSearchReplaceExact(b *testing.B) {
	lines := bigFile()
	content := strings.Join(lines, "\n") + "\n"
	search := strings.Join(lines[5000:5050], "\n")
	edits := pairs(search, "replaced\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := searchReplace(content, edits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNotFoundSimilarity measures the "did you mean" search: a 50-line
// search text with one wrong line against a 10,000-line file.
func BenchmarkNotFoundSimilarity(b *testing.B) {
	lines := bigFile()
	content := strings.Join(lines, "\n") + "\n"
	search := append([]string(nil), lines[7000:7050]...)
	search[20] = "\tlog.Printf(\"handling %s in nowhere\", id)"
	edits := pairs(strings.Join(search, "\n"), "x\n")
	b.ReportAllocs()
	for b.Loop() {
		_, err := searchReplace(content, edits)
		var ee *editError
		if !errors.As(err, &ee) || len(ee.Lines) == 0 || ee.Lines[0] != 7001 {
			b.Fatalf("err = %v", err)
		}
	}
}
