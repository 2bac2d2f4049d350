package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/engine"
)

// gone marks a file that must not exist after the command.
const gone = "\x00gone"

const calc = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"

// fileCase is one command against a prepared workspace and what the person
// and the LLM should see afterwards.
type fileCase struct {
	name  string
	files map[string]string
	dirs  []string
	cmd   command.Command
	// status and summary are the result; summary is exact unless prefix.
	status  command.Status
	summary string
	prefix  bool
	// output is text the result's Output must contain.
	output string
	// diff is text the result's Diff must contain.
	diff string
	// after is the workspace content afterwards (gone: no such file).
	after map[string]string
}

func runFileCases(t *testing.T, cases []fileCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, engine.Options{})
			for p, c := range tc.files {
				h.write(p, c)
			}
			for _, d := range tc.dirs {
				if err := os.MkdirAll(h.path(d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			out := h.apply(tc.cmd)
			r := out.Results[0]
			if r.Type != tc.cmd.Type {
				t.Errorf("result type %s, want %s", r.Type, tc.cmd.Type)
			}
			if r.Status != tc.status {
				t.Errorf("status %s, want %s (summary %q)", r.Status, tc.status, r.Summary)
			}
			if tc.prefix && !strings.HasPrefix(r.Summary, tc.summary) || !tc.prefix && r.Summary != tc.summary {
				t.Errorf("summary\n  %q\nwant\n  %q", r.Summary, tc.summary)
			}
			if !strings.Contains(r.Output, tc.output) {
				t.Errorf("output %q does not contain %q", r.Output, tc.output)
			}
			if !strings.Contains(r.Diff, tc.diff) {
				t.Errorf("diff %q does not contain %q", r.Diff, tc.diff)
			}
			for p, want := range tc.after {
				if want == gone {
					if h.exists(p) {
						t.Errorf("%s exists, want it gone", p)
					}
					continue
				}
				if got := h.read(p); got != want {
					t.Errorf("%s is\n%q\nwant\n%q", p, got, want)
				}
			}
		})
	}
}

func TestCreateFile(t *testing.T) {
	t.Parallel()
	elided := "def add(a, b):\n    # ... rest of the code unchanged\n"
	runFileCases(t, []fileCase{{
		name:    "new file in new folders",
		cmd:     create("src/app/main.go", "package main\n\nfunc main() {}\n"),
		status:  command.OK,
		summary: "Created 'src/app/main.go' (3 lines)",
		after:   map[string]string{"src/app/main.go": "package main\n\nfunc main() {}\n"},
	}, {
		name:    "one line",
		cmd:     create("a.txt", "x\n"),
		status:  command.OK,
		summary: "Created 'a.txt' (1 line)",
		after:   map[string]string{"a.txt": "x\n"},
	}, {
		name:    "empty file",
		cmd:     create("empty.txt", ""),
		status:  command.OK,
		summary: "Created 'empty.txt' (0 lines)",
		after:   map[string]string{"empty.txt": ""},
	}, {
		name:    "last line without newline",
		cmd:     create("a.txt", "one\ntwo"),
		status:  command.OK,
		summary: "Created 'a.txt' (2 lines)",
		after:   map[string]string{"a.txt": "one\ntwo"},
	}, {
		name:    "overwrite",
		files:   map[string]string{"a.txt": "old\n"},
		cmd:     create("a.txt", "new\nfile\n"),
		status:  command.OK,
		summary: "Overwrote 'a.txt' (2 lines)",
		diff:    "-old\n+new\n+file",
		after:   map[string]string{"a.txt": "new\nfile\n"},
	}, {
		name:    "overwrite with the same content",
		files:   map[string]string{"a.txt": "same\n"},
		cmd:     create("a.txt", "same\n"),
		status:  command.OK,
		summary: "No change to 'a.txt': the new content is the same as the old",
		after:   map[string]string{"a.txt": "same\n"},
	}, {
		name:    "no overwrite of an existing file",
		files:   map[string]string{"a.txt": "old\n"},
		cmd:     command.Command{Type: command.CreateFile, Path: "a.txt", Content: "new\n", NoOverwrite: true},
		status:  command.Failed,
		summary: "File 'a.txt' already exists",
		after:   map[string]string{"a.txt": "old\n"},
	}, {
		name:    "no overwrite of a new file",
		cmd:     command.Command{Type: command.CreateFile, Path: "a.txt", Content: "new\n", NoOverwrite: true},
		status:  command.OK,
		summary: "Created 'a.txt' (1 line)",
		after:   map[string]string{"a.txt": "new\n"},
	}, {
		name:    "placeholder refused, file kept",
		files:   map[string]string{"calc.py": calc},
		cmd:     create("calc.py", elided),
		status:  command.Failed,
		summary: `Refused to overwrite 'calc.py': line 2 of the new content ("# ... rest of the code unchanged") is a placeholder for code left out`,
		prefix:  true,
		after:   map[string]string{"calc.py": calc},
	}, {
		name:    "placeholder in a new file is written",
		cmd:     create("calc.py", elided),
		status:  command.OK,
		summary: "Created 'calc.py' (2 lines)",
		after:   map[string]string{"calc.py": elided},
	}, {
		name:    "folder in the way",
		dirs:    []string{"sub"},
		cmd:     create("sub", "x\n"),
		status:  command.Failed,
		summary: "'sub' is a folder, not a file",
	}})
}

func TestEditSearchReplace(t *testing.T) {
	t.Parallel()
	fixed := strings.Replace(calc, "a - b", "a + b", 1)
	runFileCases(t, []fileCase{{
		name:    "one pair",
		files:   map[string]string{"calc.py": calc},
		cmd:     replace("calc.py", "    return a - b\n", "    return a + b\n"),
		status:  command.OK,
		summary: "Edited 'calc.py' (1 search/replace edit)",
		diff:    "-    return a - b\n+    return a + b\n",
		after:   map[string]string{"calc.py": fixed},
	}, {
		name:    "two pairs applied in order",
		files:   map[string]string{"calc.py": calc},
		cmd:     replace("calc.py", "a - b", "a + b", "def add", "def plus"),
		status:  command.OK,
		summary: "Edited 'calc.py' (2 search/replace edits)",
		after:   map[string]string{"calc.py": strings.Replace(fixed, "def add", "def plus", 1)},
	}, {
		name:    "search text not found",
		files:   map[string]string{"calc.py": calc},
		cmd:     replace("calc.py", "def mull(a, b):\n    return a ** b\n", "def mul(a, b):\n    return a * b * 1\n"),
		status:  command.Failed,
		summary: "Edit of 'calc.py' failed, file unchanged: search text of edit 1 was not found in the file",
		output:  "the most similar part of the file is lines 5-6:\n   5 | def mul(a, b):",
		after:   map[string]string{"calc.py": calc},
	}, {
		name:    "search text in several places",
		files:   map[string]string{"calc.py": calc},
		cmd:     replace("calc.py", "(a, b):", "(x, y):"),
		status:  command.Failed,
		summary: "Edit of 'calc.py' failed, file unchanged: search text of edit 1 matches 2 places (lines 1, 5); add surrounding lines to make it unique",
		after:   map[string]string{"calc.py": calc},
	}, {
		name:    "already applied",
		files:   map[string]string{"calc.py": fixed},
		cmd:     replace("calc.py", "    return a - b\n", "    return a + b\n"),
		status:  command.OK,
		summary: "No change to 'calc.py': the edit was already applied",
		output:  "edit 1 seems already applied: the replacement text is already at line 2; skipped it",
		after:   map[string]string{"calc.py": fixed},
	}, {
		name:    "partly applied",
		files:   map[string]string{"calc.py": fixed},
		cmd:     replace("calc.py", "    return a - b\n", "    return a + b\n", "def mul", "def times"),
		status:  command.OK,
		summary: "Edited 'calc.py' (1 search/replace edit), 1 already applied",
		output:  "edit 1 seems already applied",
		after:   map[string]string{"calc.py": strings.Replace(fixed, "def mul", "def times", 1)},
	}, {
		name:    "a failing pair leaves the whole file unchanged",
		files:   map[string]string{"calc.py": calc},
		cmd:     replace("calc.py", "a - b", "a + b", "def div", "def quot"),
		status:  command.Failed,
		summary: "Edit of 'calc.py' failed, file unchanged: search text of edit 2 was not found in the file",
		after:   map[string]string{"calc.py": calc},
	}, {
		name:    "missing file",
		cmd:     replace("nope.py", "a", "b"),
		status:  command.Failed,
		summary: "File 'nope.py' not found",
		after:   map[string]string{"nope.py": gone},
	}})
}

func TestDeleteFile(t *testing.T) {
	t.Parallel()
	runFileCases(t, []fileCase{{
		name:    "file",
		files:   map[string]string{"old.txt": "bye\n", "keep.txt": "stay\n"},
		cmd:     del("old.txt"),
		status:  command.OK,
		summary: "Deleted 'old.txt'",
		after:   map[string]string{"old.txt": gone, "keep.txt": "stay\n"},
	}, {
		name:    "missing file",
		cmd:     del("nope.txt"),
		status:  command.Failed,
		summary: "File 'nope.txt' not found",
	}, {
		name:    "folder refused",
		files:   map[string]string{"sub/inner.txt": "in\n"},
		cmd:     del("sub"),
		status:  command.Failed,
		summary: "'sub' is a folder, not a file",
		after:   map[string]string{"sub/inner.txt": "in\n"},
	}})
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	src := map[string]string{"src/a.go": "package a\n", "src/b.go": "package b\n", "src/notes.txt": "n\n"}
	runFileCases(t, []fileCase{{
		name:    "file",
		files:   src,
		cmd:     read("src/a.go"),
		status:  command.OK,
		summary: "Queued 'src/a.go' for the next request",
		after:   src,
	}, {
		name:    "missing file",
		cmd:     read("nope.txt"),
		status:  command.Failed,
		summary: "File 'nope.txt' not found",
	}, {
		name:    "glob with matches",
		files:   src,
		cmd:     read("src/*.go"),
		status:  command.OK,
		summary: "Queued 2 files matching 'src/*.go' for the next request",
	}, {
		name:    "glob with one match",
		files:   src,
		cmd:     read("**/*.txt"),
		status:  command.OK,
		summary: "Queued 1 file matching '**/*.txt' for the next request",
	}, {
		name:    "glob without matches",
		files:   src,
		cmd:     read("src/*.rs"),
		status:  command.Failed,
		summary: "No file matches 'src/*.rs'",
	}, {
		name:    "folder refused",
		files:   src,
		cmd:     read("src"),
		status:  command.Failed,
		summary: "'src' is a folder; the workspace listing shows its files",
	}, {
		name:    "outside rejected",
		cmd:     read("../secret.txt"),
		status:  command.Rejected,
		summary: "REJECTED: Path '../secret.txt' is outside workspace",
	}})
}

// A reply of 300 inline reads of a 1 MB file (the JSON front end's
// readFile) returns 10 MB of content in all: the reads past that fail with
// a result saying why and when to read, and the turn's journal stays near
// 10 MB, not 300.
func TestInlineReadsOfOneReplyAreBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	h.write("big.txt", strings.Repeat(strings.Repeat("x", 1023)+"\n", 1024))
	cmds := make([]command.Command, 300)
	for i := range cmds {
		cmds[i] = command.Command{Type: command.ReadFile, Path: "big.txt", Inline: true}
	}
	out := h.apply(cmds...)
	read := 0
	for i, res := range out.Results {
		switch {
		case res.Success():
			read++
		case !strings.Contains(res.Summary, "Not read: 'big.txt' is 1.0 MB, more than the 0 bytes left of the 10.0 MB the reads of one reply return together; read it in a later reply"):
			t.Fatalf("read %d: %s", i, res.Summary)
		}
	}
	if read != 10 {
		t.Errorf("%d reads returned the file; want 10", read)
	}
	info, err := os.Stat(h.journal())
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > 16<<20 {
		t.Errorf("the turn's journal is %d bytes", info.Size())
	}
}

func TestParseErrorMessageDone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	perr := command.Command{Type: command.ParseError, Path: "a.txt", Error: "CREATE_FILE at line 3 is not closed"}
	out := h.apply(
		perr,
		command.Command{Type: command.Message, Text: "I fixed the typo."},
		create("a.txt", "a\n"),
		command.Command{Type: command.Done, Text: "Fixed the typo in a.txt."},
	)
	want := []command.Result{
		{Type: command.ParseError, Path: "a.txt", Status: command.Failed, Summary: "CREATE_FILE at line 3 is not closed"},
		{Type: command.Message, Status: command.OK, Summary: "Message shown to the person"},
		{Type: command.CreateFile, Path: "a.txt", Status: command.OK, Summary: "Created 'a.txt' (1 line)"},
		{Type: command.Done, Status: command.Failed, Summary: "DONE held back: command 1 of this reply (PARSE_ERROR 'a.txt') failed; the session goes on. Fix it, check again, then send DONE"},
	}
	for i, w := range want {
		r := out.Results[i]
		if r.Type != w.Type || r.Path != w.Path || r.Status != w.Status || r.Summary != w.Summary {
			t.Errorf("result %d: %+v, want %+v", i, r, w)
		}
	}
	if out.Done {
		t.Errorf("DONE was honoured after a block that could not be read")
	}
	if !h.exists("a.txt") {
		t.Error("a command after a parse error was not carried out")
	}
	if out.Waiting != nil {
		t.Errorf("a plain turn reports Waiting %v", out.Waiting)
	}
}

func TestNoDoneWithoutDoneCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	out := h.apply(command.Command{Type: command.Message, Text: "Working on it."})
	if out.Done || out.Summary != "" {
		t.Errorf("Done %v, Summary %q without a DONE command", out.Done, out.Summary)
	}
}

// A reply may end with its final check and DONE: DONE is honoured only if
// every command before it succeeded.
func TestDoneAfterTheCheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Options{})
	out := h.apply(create("a.txt", "a\n"), run("test -s a.txt"), command.Command{Type: command.Done, Text: "checked"})
	if !out.Done || out.Summary != "checked" || !out.Results[2].Success() {
		t.Errorf("DONE after a passing check: Done %v, %+v", out.Done, out.Results[2])
	}
	h.nextTurn()
	out = h.apply(run("test -s missing.txt"), command.Command{Type: command.Message, Text: "checking"}, command.Command{Type: command.Done, Text: "oops"})
	want := "DONE held back: command 1 of this reply (RUN_COMMAND 'test -s missing.txt') failed; the session goes on. Fix it, check again, then send DONE"
	if out.Done || out.Results[2].Status != command.Failed || out.Results[2].Summary != want {
		t.Errorf("DONE after a failing check: Done %v, %q\nwant %q", out.Done, out.Results[2].Summary, want)
	}
}
