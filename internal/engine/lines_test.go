package engine_test

import (
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
)

const tenLines = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"

// TestLineRangeEdits checks several line-range edits of one reply against
// the final text: their numbers refer to the file as the LLM saw it, until
// something else in the same reply changes the file, after which they refer
// to the content at that point.
func TestLineRangeEdits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		before string
		cmds   []command.Command
		// statuses has each result's initial: o(k), f(ailed), ...
		statuses string
		want     string
	}{{
		name:   "numbers as before the reply",
		before: tenLines,
		cmds: []command.Command{
			lines("f.txt", 2, 2, "two\n"),
			lines("f.txt", 5, 5, "five\nfive and a half\n"),
			lines("f.txt", 9, 9, ""),
			lines("f.txt", 1, 0, "zero\n"),
			lines("f.txt", 10, 10, "10\n11\n"),
		},
		statuses: "ooooo",
		want:     "zero\n1\ntwo\n3\n4\nfive\nfive and a half\n6\n7\n8\n10\n11\n",
	}, {
		name:   "ranges sent in any order",
		before: tenLines,
		cmds: []command.Command{
			lines("f.txt", 8, 9, "eight-nine\n"),
			lines("f.txt", 1, 3, ""),
			lines("f.txt", 5, 5, "5a\n5b\n5c\n"),
		},
		statuses: "ooo",
		want:     "4\n5a\n5b\n5c\n6\n7\neight-nine\n10\n",
	}, {
		name:   "CREATE_FILE resets the numbering",
		before: "1\n2\n3\n",
		cmds: []command.Command{
			lines("f.txt", 2, 2, "two\nzwei\n"),
			create("f.txt", "a\nb\nc\nd\n"),
			lines("f.txt", 4, 4, "D\n"),
			lines("f.txt", 1, 1, "A\nA2\n"),
			lines("f.txt", 2, 2, "B\n"),
		},
		statuses: "ooooo",
		want:     "A\nA2\nB\nc\nD\n",
	}, {
		name:   "search/replace resets the numbering",
		before: "1\n2\n3\n4\n5\n",
		cmds: []command.Command{
			lines("f.txt", 1, 1, "one\nuno\n"),
			replace("f.txt", "3\n", "three\n"),
			lines("f.txt", 3, 3, "X\n"),
			lines("f.txt", 6, 6, "six\n"),
		},
		statuses: "oooo",
		want:     "one\nuno\nX\nthree\n4\nsix\n",
	}, {
		name:   "RUN_COMMAND that changes the file resets the numbering",
		before: "1\n2\n3\n",
		cmds: []command.Command{
			lines("f.txt", 1, 1, "one\nuno\n"),
			run(`printf 'p\nq\nr\n' > f.txt`),
			lines("f.txt", 2, 2, "Q\n"),
			lines("f.txt", 3, 3, "R\nS\n"),
		},
		statuses: "oooo",
		want:     "p\nQ\nR\nS\n",
	}, {
		name:   "RUN_COMMAND that leaves the file alone keeps the numbering",
		before: "1\n2\n3\n",
		cmds: []command.Command{
			lines("f.txt", 1, 1, "one\nuno\n"),
			run(`echo other > other.txt`),
			lines("f.txt", 2, 2, "two\n"),
		},
		statuses: "ooo",
		want:     "one\nuno\ntwo\n3\n",
	}, {
		// Restoring the file (git checkout, a backup copy) makes the
		// restored content the new reference, like any other change.
		name:   "RUN_COMMAND that restores the original resets the numbering",
		before: "1\n2\n3\n4\n",
		cmds: []command.Command{
			lines("f.txt", 1, 1, "one\nuno\n"),
			run(`printf '1\n2\n3\n4\n' > f.txt`),
			lines("f.txt", 1, 1, "x\ny\n"),
			lines("f.txt", 3, 3, "Z\n"),
		},
		statuses: "oooo",
		want:     "x\ny\n2\nZ\n4\n",
	}, {
		name:   "other files keep their own numbering",
		before: "1\n2\n3\n",
		cmds: []command.Command{
			lines("f.txt", 1, 1, "one\nuno\n"),
			create("g.txt", "g1\ng2\n"),
			lines("g.txt", 1, 1, "G\n"),
			lines("f.txt", 2, 2, "two\n"),
		},
		statuses: "oooo",
		want:     "one\nuno\ntwo\n3\n",
	}, {
		name:   "a failed edit in between changes nothing",
		before: "1\n2\n3\n",
		cmds: []command.Command{
			lines("f.txt", 1, 1, "one\nuno\n"),
			replace("f.txt", "not there", "x"),
			lines("f.txt", 2, 2, "two\n"),
		},
		statuses: "ofo",
		want:     "one\nuno\ntwo\n3\n",
	}, {
		name:   "the same path written differently",
		before: "1\n2\n3\n",
		cmds: []command.Command{
			lines("./f.txt", 1, 1, "one\nuno\n"),
			lines("./f.txt", 2, 2, "two\n"),
			lines("sub/../f.txt", 3, 3, "three\n"),
		},
		statuses: "ooo",
		want:     "one\nuno\ntwo\nthree\n",
	}, {
		name:   "overlap fails and keeps the earlier edit",
		before: tenLines,
		cmds: []command.Command{
			lines("f.txt", 2, 3, "two-three\n"),
			lines("f.txt", 3, 4, "overlapping\n"),
			lines("f.txt", 5, 5, "five\n"),
		},
		statuses: "ofo",
		want:     "1\ntwo-three\n4\nfive\n6\n7\n8\n9\n10\n",
	}, {
		name:   "out of range fails",
		before: "1\n2\n3\n",
		cmds: []command.Command{
			lines("f.txt", 5, 6, "past the end\n"),
			lines("f.txt", 0, 1, "zero\n"),
			lines("f.txt", 3, 1, "backwards\n"),
		},
		statuses: "fff",
		want:     "1\n2\n3\n",
	}, {
		name: "missing file fails",
		cmds: []command.Command{
			lines("f.txt", 1, 1, "x\n"),
		},
		statuses: "f",
	}, {
		name:   "CRLF file and no final newline kept",
		before: "1\r\n2\r\n3",
		cmds: []command.Command{
			lines("f.txt", 1, 1, "one\n"),
			lines("f.txt", 3, 3, "three\n"),
		},
		statuses: "oo",
		want:     "one\r\n2\r\nthree",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, engine.Options{})
			if tc.before != "" {
				h.write("f.txt", tc.before)
			}
			out := h.apply(tc.cmds...)
			var got strings.Builder
			for _, r := range out.Results {
				got.WriteByte(string(r.Status)[0])
			}
			if got.String() != tc.statuses {
				t.Errorf("statuses %s, want %s:%s", got.String(), tc.statuses, summaries(out.Results))
			}
			if tc.want == "" {
				return
			}
			if text := h.read("f.txt"); text != tc.want {
				t.Errorf("f.txt is\n%q\nwant\n%q%s", text, tc.want, summaries(out.Results))
			}
		})
	}
}

// TestLineRangeSummaries checks what the LLM reads about line-range edits.
func TestLineRangeSummaries(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.write("f.txt", tenLines)
	out := h.apply(
		lines("f.txt", 2, 2, "two\n"),
		lines("f.txt", 5, 6, "five-six\n"),
		lines("f.txt", 6, 7, "overlap\n"),
		lines("f.txt", 11, 12, "past\n"),
	)
	want := []struct {
		status  command.Status
		summary string
	}{
		{command.OK, "Edited 'f.txt' lines 2-2"},
		{command.OK, "Edited 'f.txt' lines 5-6 (numbered as before this reply's earlier edits of it)"},
		{command.Failed, "Edit of 'f.txt' failed, file unchanged: this edit (lines 6-7) overlaps an earlier edit of this reply (lines 5-6); line numbers refer to the file before this reply, so each line can be changed once: merge the two edits"},
		{command.Failed, `Edit of 'f.txt' failed, file unchanged: end_line 12 is past the end of the file, which has 10 lines (before this reply's edits); to add lines at the end, replace line 10 with itself followed by the new lines (start_line="10" end_line="10")`},
	}
	for i, w := range want {
		r := out.Results[i]
		if r.Status != w.status || r.Summary != w.summary {
			t.Errorf("result %d: %s %q\nwant %s %q", i, r.Status, r.Summary, w.status, w.summary)
		}
	}
	if r := out.Results[0]; r.Added != 1 || r.Removed != 1 || !strings.Contains(r.Diff, "-2\n+two\n") {
		t.Errorf("diff of the first edit: +%d -%d\n%s", r.Added, r.Removed, r.Diff)
	}
}
