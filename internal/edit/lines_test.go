package edit

import (
	"strings"
	"testing"
)

// applyRanges applies edits one at a time with a Tracker, stopping at the
// first error with the original text.
func applyRanges(original string, edits []LineRange) (string, error) {
	tr := NewTracker(original)
	for _, r := range edits {
		if _, err := tr.Apply(r); err != nil {
			return original, err
		}
	}
	return tr.Text(), nil
}

func TestTrackerRanges(t *testing.T) {
	const five = "one\ntwo\nthree\nfour\nfive\n"
	tests := []struct {
		name     string
		original string
		edits    []LineRange
		want     string
	}{
		{"replace one line by two", five, []LineRange{{2, 2, "TWO\n2b"}}, "one\nTWO\n2b\nthree\nfour\nfive\n"},
		{"replace a range by one line", five, []LineRange{{2, 4, "middle"}}, "one\nmiddle\nfive\n"},
		{"empty text deletes", five, []LineRange{{1, 2, ""}}, "three\nfour\nfive\n"},
		{"blank line is one empty line", five, []LineRange{{3, 3, "\n"}}, "one\ntwo\n\nfour\nfive\n"},
		{"end before start inserts", five, []LineRange{{3, 2, "2.5\n"}}, "one\ntwo\n2.5\nthree\nfour\nfive\n"},
		{"append after the last line", five, []LineRange{{6, 5, "six"}}, five + "six\n"},
		{"fill an empty file", "", []LineRange{{1, 0, "first"}}, "first\n"},
		{"delete everything", five, []LineRange{{1, 5, ""}}, ""},
		{
			name:     "later edits keep the original numbering, in any order",
			original: five,
			edits:    []LineRange{{5, 5, "FIVE"}, {1, 1, "ONE\none and a half"}, {3, 4, ""}},
			want:     "ONE\none and a half\ntwo\nFIVE\n",
		},
		{
			name:     "insertion and replacement at the same line",
			original: five,
			edits:    []LineRange{{2, 3, "2-3"}, {2, 1, "before two"}, {4, 3, "after three"}},
			want:     "one\nbefore two\n2-3\nafter three\nfour\nfive\n",
		},
		{"two insertions at one place keep their order", five, []LineRange{{2, 1, "a"}, {2, 1, "b"}}, "one\na\nb\ntwo\nthree\nfour\nfive\n"},
		{"CRLF file stays CRLF", "a\r\nb\r\nc\r\n", []LineRange{{2, 2, "B\nB2\n"}}, "a\r\nB\r\nB2\r\nc\r\n"},
		{"CRLF replacement on an LF file", "a\nb\n", []LineRange{{1, 1, "x\r\ny\r\n"}}, "x\ny\nb\n"},
		{"no final newline is kept", "a\nb\nc", []LineRange{{3, 3, "C\nD"}}, "a\nb\nC\nD"},
		{"appending to a file without final newline", "a\nb", []LineRange{{3, 2, "c"}}, "a\nb\nc"},
		{"deleting the last line of a file without final newline", "a\nb", []LineRange{{2, 2, ""}}, "a"},
		{"untouched lines keep odd endings", "a\r\nb\nc\n", []LineRange{{3, 3, "C"}}, "a\r\nb\nC\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyRanges(tt.original, tt.edits)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTrackerErrors(t *testing.T) {
	const five = "one\ntwo\nthree\nfour\nfive\n"
	thirty := numberedFile(30, nil)
	tests := []struct {
		name  string
		orig  string
		edits []LineRange
		msg   string
	}{
		{
			name:  "overlap names both edits",
			orig:  thirty,
			edits: []LineRange{{12, 20, "x"}, {1, 1, "y"}, {10, 15, "z"}},
			msg:   "this edit (lines 10-15) overlaps an earlier edit of this reply (lines 12-20); line numbers refer to the file before this reply, so each line can be changed once: merge the two edits",
		},
		{
			name:  "insertion inside a replaced range",
			orig:  thirty,
			edits: []LineRange{{2, 4, "x"}, {3, 2, "y"}},
			msg:   "this edit (insertion before line 3) overlaps an earlier edit of this reply (lines 2-4); line numbers refer to the file before this reply, so each line can be changed once: merge the two edits",
		},
		{
			name:  "end past the file names its line count",
			orig:  five,
			edits: []LineRange{{1, 1, "x"}, {4, 9, "y"}},
			msg:   `end_line 9 is past the end of the file, which has 5 lines (before this reply's edits); to add lines at the end, replace line 5 with itself followed by the new lines (start_line="5" end_line="5")`,
		},
		{
			name:  "insertion past the end",
			orig:  five,
			edits: []LineRange{{7, 6, "x"}},
			msg:   `start_line 7 is past the end of the file, which has 5 lines (before this reply's edits); to add lines at the end, replace line 5 with itself followed by the new lines (start_line="5" end_line="5")`,
		},
		{
			name:  "past a file of one line",
			orig:  "only\n",
			edits: []LineRange{{2, 3, "x"}},
			msg:   `end_line 3 is past the end of the file, which has 1 line (before this reply's edits); to add lines at the end, replace line 1 with itself followed by the new lines (start_line="1" end_line="1")`,
		},
		{
			name:  "range in an empty file",
			orig:  "",
			edits: []LineRange{{1, 1, "x"}},
			msg:   "end_line 1 is past the end of the file, which has 0 lines (before this reply's edits); the file is empty, so write it anew with its whole content",
		},
		{
			name:  "line zero",
			orig:  five,
			edits: []LineRange{{0, 2, "x"}},
			msg:   "start_line 0 is invalid; lines count from 1",
		},
		{
			name:  "reversed range",
			orig:  five,
			edits: []LineRange{{4, 2, "x"}},
			msg:   "end_line 2 is before start_line 4",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := tt.orig
			got, err := applyRanges(orig, tt.edits)
			if err == nil {
				t.Fatalf("succeeded with %q", got)
			}
			if got != orig {
				t.Errorf("text changed on error: %q", got)
			}
			if err.Error() != tt.msg {
				t.Errorf("error text:\n%s\nwant:\n%s", err, tt.msg)
			}
		})
	}
}

func TestTrackerOneAtATime(t *testing.T) {
	tr := NewTracker("a\nb\nc\nd\n")
	steps := []struct {
		r    LineRange
		want string
		msg  string
	}{
		{LineRange{1, 1, "A1\nA2\nA3"}, "A1\nA2\nA3\nb\nc\nd\n", ""},
		{LineRange{3, 3, "C"}, "A1\nA2\nA3\nb\nC\nd\n", ""},
		{LineRange{2, 3, "x"}, "A1\nA2\nA3\nb\nC\nd\n",
			"this edit (lines 2-3) overlaps an earlier edit of this reply (line 3); line numbers refer to the file before this reply, so each line can be changed once: merge the two edits"},
		{LineRange{4, 4, ""}, "A1\nA2\nA3\nb\nC\n", ""},
		{LineRange{5, 4, "e"}, "A1\nA2\nA3\nb\nC\ne\n", ""},
	}
	for i, s := range steps {
		got, err := tr.Apply(s.r)
		if s.msg == "" && err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if s.msg != "" && (err == nil || err.Error() != s.msg) {
			t.Fatalf("step %d: err = %v, want %q", i+1, err, s.msg)
		}
		if got != s.want || tr.Text() != s.want {
			t.Errorf("step %d: text %q (Text() %q), want %q", i+1, got, tr.Text(), s.want)
		}
	}
}

func TestResumeTracker(t *testing.T) {
	original := numberedFile(10, nil)
	edits := []LineRange{{8, 9, "eight-nine"}, {2, 2, "two\ntwo more"}, {5, 4, "inserted"}}
	want, err := applyRanges(original, edits)
	if err != nil {
		t.Fatal(err)
	}
	before := NewTracker(original)
	for _, r := range edits[:2] {
		if _, err := before.Apply(r); err != nil {
			t.Fatal(err)
		}
	}
	// A crash here: only the original and the applied ranges (journaled by
	// the caller) survive.
	resumed, err := ResumeTracker(original, edits[:2])
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Text() != before.Text() {
		t.Fatalf("resumed text %q, want %q", resumed.Text(), before.Text())
	}
	got, err := resumed.Apply(edits[2])
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := resumed.Apply(LineRange{9, 9, "again"}); err == nil || !strings.Contains(err.Error(), "overlaps an earlier edit") {
		t.Errorf("overlap after resume: err = %v", err)
	}
	_, err = resumed.Apply(LineRange{12, 12, "x"})
	wantMsg := `end_line 12 is past the end of the file, which has 10 lines (before this reply's edits); to add lines at the end, replace line 10 with itself followed by the new lines (start_line="10" end_line="10")`
	if err == nil || err.Error() != wantMsg {
		t.Errorf("out of range after resume: err = %v, want %q", err, wantMsg)
	}
	if _, err := ResumeTracker(original, []LineRange{{11, 12, "x"}}); err == nil || !strings.Contains(err.Error(), "past the end of the file") {
		t.Errorf("resume with a bad range: err = %v", err)
	}
}
