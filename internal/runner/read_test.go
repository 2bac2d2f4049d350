package runner_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestReadRequests: the files the LLM asked for are shown in the next
// request as they are then, numbered, cut to read_lines, and only once: the
// reads of one file are shown together, a line many ask for once.
func TestReadRequests(t *testing.T) {
	f := newFixture(t)
	f.limits.ReadLines = 4
	f.r, f.rec = f.runner(nil)
	f.writeWS("a.txt", "alpha\nbeta\n")
	f.writeWS("long.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	f.writeWS("src/x.go", "package x\n")
	f.writeWS("src/y.go", "package y\n")
	f.writeWS("bin.dat", "\x00\x01\x02\x03")
	id := f.create("read")
	f.apply(id, "reply.txt", `[READ_FILE path="a.txt"]
[READ_FILE path="long.txt" lines="3-4"]
[READ_FILE path="long.txt"]
[READ_FILE path="long.txt" lines="9-20"]
[READ_FILE path="src/*.go"]
[READ_FILE path="bin.dat"]
[READ_FILE path="missing.txt"]
`)
	text := f.request(id, 2)
	requested := text[strings.Index(text, "## Requested File Contents"):]
	want := `## Requested File Contents
--- a.txt ---
   1 | alpha
   2 | beta
--- end a.txt ---
--- long.txt (lines 1-4 of 10) ---
   1 | 1
   2 | 2
   3 | 3
   4 | 4
[... 6 more lines; request them with [READ_FILE path="long.txt" lines="5-8"] ...]
--- end long.txt ---
--- long.txt (lines 9-10 of 10) ---
   9 | 9
  10 | 10
--- end long.txt ---
--- src/x.go ---
   1 | package x
--- end src/x.go ---
--- src/y.go ---
   1 | package y
--- end src/y.go ---
--- bin.dat ---
(binary file, 4 bytes; not shown)
--- end bin.dat ---

=== PROMPT ===
`
	if !strings.HasPrefix(requested, want) {
		t.Errorf("requested files:\n%s\nwant\n%s", requested, want)
	}
	if !strings.Contains(text, "[FAILED] READ_FILE: File 'missing.txt' not found\n") {
		t.Error("the failed READ_FILE is not reported")
	}
	// The result of a partial read names the range it shows, which a
	// range past the end or read_lines may cut; two reads of one file are
	// told apart.
	for _, line := range []string{
		"[OK] READ_FILE: Queued 'long.txt' lines 3-4 for the next request\n",
		"[OK] READ_FILE: Queued 'long.txt' lines 1-4 for the next request\n",
		"[OK] READ_FILE: Queued 'long.txt' lines 9-10 for the next request\n",
		"[OK] READ_FILE: Queued 'a.txt' for the next request\n",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("no result line %q", line)
		}
	}
	// The requests are saved as the protocol describes: a plain path, or
	// an object with the range.
	saved := readFile(t, f.store.Path(id))
	compact := strings.Join(strings.Fields(saved), "")
	if !strings.Contains(compact, `"readFileRequests":["a.txt",{"path":"long.txt","startLine":3,"endLine":4},"long.txt",{"path":"long.txt","startLine":9,"endLine":20},"src/*.go","bin.dat"]`) {
		t.Errorf("saved read requests:\n%s", saved)
	}
	// The next request shows nothing again unless asked.
	f.apply(id, "next.txt", "[MESSAGE]\nread them\n[/MESSAGE]\n")
	if strings.Contains(f.request(id, 3), "## Requested File Contents") {
		t.Error("files requested once are shown again")
	}
	if st := f.load(id); len(st.ReadFileRequests) != 0 {
		t.Errorf("read requests %v stayed in the state", st.ReadFileRequests)
	}
}

// TestReadRequestShowsCurrentContent: a requested file is shown as it is
// when the request is written, and a file gone by then is said to be gone.
func TestReadRequestShowsCurrentContent(t *testing.T) {
	f := newFixture(t)
	f.writeWS("a.txt", "old\n")
	f.writeWS("gone.txt", "here\n")
	id := f.create("read")
	f.apply(id, "reply.txt", "[READ_FILE path=\"a.txt\"]\n[CREATE_FILE path=\"a.txt\"]\nnew\n[/CREATE_FILE]\n[READ_FILE path=\"gone.txt\"]\n[DELETE_FILE path=\"gone.txt\"]\n")
	text := f.request(id, 2)
	if !strings.Contains(text, "--- a.txt ---\n   1 | new\n--- end a.txt ---\n") {
		t.Errorf("a.txt not shown as it is now:\n%s", text[strings.Index(text, "## Requested"):])
	}
	if !strings.Contains(text, "--- gone.txt ---\n(file not found: it no longer exists)\n--- end gone.txt ---\n") {
		t.Errorf("gone.txt not said to be gone:\n%s", text[strings.Index(text, "## Requested"):])
	}
}

// TestReadRequestGlobIsCapped: a broad pattern brings a bounded number of
// files into the request, and says how many more there were.
func TestReadRequestGlobIsCapped(t *testing.T) {
	const shown, total = 30, 35
	f := newFixture(t)
	for i := range total {
		f.writeWS(fmt.Sprintf("f%03d.txt", i), "x\n")
	}
	id := f.create("read")
	f.apply(id, "reply.txt", "[READ_FILE path=\"*.txt\"]\n")
	text := f.request(id, 2)
	note := fmt.Sprintf("--- *.txt ---\n(%d files match; the first %d are shown below. Ask for the others with narrower patterns.)\n--- end *.txt ---\n", total, shown)
	if !strings.Contains(text, note) {
		t.Errorf("request lacks the note %q", note)
	}
	if n := strings.Count(text, "   1 | x\n"); n != shown {
		t.Errorf("%d files shown, want %d", n, shown)
	}
	if !strings.Contains(text, fmt.Sprintf("--- f%03d.txt ---", shown-1)) || strings.Contains(text, fmt.Sprintf("--- f%03d.txt ---", shown)) {
		t.Error("not the first files in order are shown")
	}
}

// TestReadRequestsAreBounded: a reply of 1,500 READ_FILE blocks with
// overlapping ranges of one file, then reads of two more files, makes a
// request whose file contents stay within token_budget: each line is
// shown once, and what found no room is listed by name and lines, with how
// to ask for it.
func TestReadRequestsAreBounded(t *testing.T) {
	f := newFixture(t)
	f.limits.TokenBudget = 10_000 // 40 KB of file contents
	f.r, f.rec = f.runner(nil)
	var log strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&log, "line %d of the log, padded with a few more words\n", i)
	}
	f.writeWS("big.log", log.String())
	f.writeWS("small.txt", "small\n")
	id := f.create("read")
	var reply strings.Builder
	for i := 1; i <= 1500; i++ {
		fmt.Fprintf(&reply, "[READ_FILE path=\"big.log\" lines=\"%d-%d\"]\n", i, i+499)
	}
	reply.WriteString("[READ_FILE path=\"small.txt\"]\n[READ_FILE path=\"big.log\" lines=\"2500-2600\"]\n")
	f.apply(id, "reply.txt", reply.String())
	text := f.request(id, 2)
	at := strings.Index(text, "## Requested File Contents\n")
	end := strings.Index(text, "\nLeft out for room: ")
	if at < 0 || end < at {
		t.Fatalf("no file contents or no list of what was left out:\n%.3000s", text[max(at, 0):])
	}
	if n := end - at; n > 40<<10+4<<10 {
		t.Errorf("the file contents take %d bytes; the budget gives them 40 KB", n)
	}
	shown := 0
	for i := 1; i <= 3000; i++ {
		switch n := strings.Count(text, fmt.Sprintf(" | line %d of the log,", i)); {
		case n > 1:
			t.Fatalf("line %d is shown %d times", i, n)
		case n == 1:
			shown++
		}
	}
	if shown < 600 {
		t.Errorf("%d lines shown", shown)
	}
	left := fmt.Sprintf(`Left out for room: the file contents above fill this request's 39.1 KB for them (token_budget). Ask again for what you still need, with READ_FILE in a later reply:
  big.log lines %d-1999
  big.log lines 2500-2600
  small.txt
`, shown+1)
	if !strings.Contains(text, left) {
		t.Errorf("the request does not list what was left out as\n%s\n%s", left, text[end:])
	}
	for _, line := range []string{
		"[OK] READ_FILE: Queued 'big.log' lines 1-500 for the next request\n",
		fmt.Sprintf("[OK] READ_FILE: Queued 'big.log' lines %d-%d for the next request\n", shown-499, shown),
		fmt.Sprintf("[OK] READ_FILE: Queued 'big.log' lines %d-%d (left out for room, see the end of the file contents) for the next request\n", shown+1, shown+500),
		"[OK] READ_FILE: Queued 'small.txt' (left out for room, see the end of the file contents) for the next request\n",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("no result line %q", line)
		}
	}
}
