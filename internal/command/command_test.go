package command

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The JSON of `courier parse --json` has the type first, then the fields
// that are not empty.
func TestMarshalJSON(t *testing.T) {
	tests := []struct {
		c    Command
		want string
	}{
		{Command{Type: CreateFile, Path: "a.txt", Line: 3}, `{"type":"CREATE_FILE","line":3,"path":"a.txt"}`},
		{Command{Type: EditFile, Path: "a.go", StartLine: 2, EndLine: 4, Content: "x\n"}, `{"type":"EDIT_FILE","path":"a.go","content":"x\n","startLine":2,"endLine":4}`},
		{Command{Type: EditFile, Path: "a.go", Edits: []Edit{{Search: "a", Replace: "b"}}}, `{"type":"EDIT_FILE","path":"a.go","edits":[{"search":"a","replace":"b"}]}`},
		{Command{Type: DeleteFile, Path: "old"}, `{"type":"DELETE_FILE","path":"old"}`},
		{Command{Type: ReadFile, Path: "big.go", StartLine: 120, EndLine: 180}, `{"type":"READ_FILE","path":"big.go","startLine":120,"endLine":180}`},
		{Command{Type: RunCommand, Command: "make", Dir: "src", Timeout: Duration(time.Minute)}, `{"type":"RUN_COMMAND","command":"make","dir":"src","timeout":"1m0s"}`},
		{Command{Type: Message, Text: "hi"}, `{"type":"MESSAGE","text":"hi"}`},
		{Command{Type: Done, Text: ""}, `{"type":"DONE"}`},
		{Command{Type: ParseError, Error: "no closing tag", Path: "x"}, `{"type":"PARSE_ERROR","path":"x","error":"no closing tag"}`},
		// The JSON front end's flags appear only where they apply.
		{Command{Type: CreateFile, ID: "f1", Path: "a.bin", Content: "AAE=", Encoding: Base64, NoOverwrite: true}, `{"type":"CREATE_FILE","id":"f1","path":"a.bin","content":"AAE=","encoding":"base64","noOverwrite":true}`},
		{Command{Type: EditFile, Path: "a", Edits: []Edit{{Search: "$1", Replace: "x"}}, Literal: true}, `{"type":"EDIT_FILE","path":"a","edits":[{"search":"$1","replace":"x"}],"literal":true}`},
		{Command{Type: ReadFile, Path: "a*b", Inline: true, Encoding: Base64}, `{"type":"READ_FILE","path":"a*b","encoding":"base64","inline":true}`},
		{Command{Type: RunCommand, Command: "ls", SplitOutput: true}, `{"type":"RUN_COMMAND","command":"ls","splitOutput":true}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.c)
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.c, got, err, tt.want)
		}
	}
}

// Journals store commands as JSON and must read them back unchanged.
func TestJSONRoundTrip(t *testing.T) {
	for _, c := range []Command{
		{Type: CreateFile, Path: "a", Content: "x\n", NoOverwrite: true, Line: 1},
		{Type: EditFile, Path: "a", StartLine: 1, EndLine: 2, Content: ""},
		{Type: EditFile, Path: "a", Edits: []Edit{{Search: "s\n", Replace: "r\n"}}},
		{Type: RunCommand, Command: "go test ./...", Dir: "sub", Timeout: Duration(90 * time.Second), Env: map[string]string{"A": "1"}},
		{Type: ReadFile, Path: "src/**/*.go"},
		{Type: Done, Text: "summary"},
		// A journal that dropped these flags would replay a JSON reply with
		// the tag protocol's semantics after a crash: base64 text written
		// as the file, a tolerant edit instead of an exact one.
		{Type: CreateFile, ID: "img", Path: "a.png", Content: "iVBORw0KGgo=", Encoding: Base64, NoOverwrite: true},
		{Type: EditFile, ID: "e", Path: "a", Edits: []Edit{{Search: "x", Replace: "$1"}}, Literal: true},
		{Type: ReadFile, ID: "r", Path: "[x].txt", Inline: true, Encoding: Base64},
		{Type: RunCommand, ID: "s", Command: "make", SplitOutput: true, Env: map[string]string{"DEBUG": "true"}},
	} {
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Command
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", data, err)
		}
		if !reflect.DeepEqual(back, c) {
			t.Errorf("round trip of %s gave %+v, want %+v", data, back, c)
		}
	}
}

func TestKinds(t *testing.T) {
	if !(Command{Type: EditFile, StartLine: 1, EndLine: 1}).IsLineRange() {
		t.Error("a line-range edit is not recognised")
	}
	if (Command{Type: EditFile, Edits: []Edit{{}}}).IsLineRange() {
		t.Error("a search/replace edit is taken for a line range")
	}
	for _, typ := range Types {
		want := typ == CreateFile || typ == EditFile || typ == DeleteFile
		if got := (Command{Type: typ}).ChangesFiles(); got != want {
			t.Errorf("%s ChangesFiles = %v", typ, got)
		}
	}
	if !(Result{Status: OK}).Success() || (Result{Status: Rejected}).Success() {
		t.Error("Success does not follow the status")
	}
}

// Results carry what the JSON front end reports, and journals keep it.
func TestResultJSONRoundTrip(t *testing.T) {
	code := 0
	for _, r := range []Result{
		{Type: RunCommand, Status: Failed, Stdout: "out\n", Stderr: "err\n", TimedOut: true, DurationMS: 1000},
		{Type: ReadFile, Status: OK, Path: "a.bin", Content: "AAE=", Encoding: Base64, Size: 2},
		{Type: CreateFile, Status: Failed, Cause: CauseExists, Summary: "File 'a' already exists"},
		{Type: RunCommand, Status: Denied, Cause: CausePolicy, Reason: "`sudo` is denied", ExitCode: &code,
			Time: time.Date(2025, 1, 15, 10, 30, 0, 123e6, time.UTC)},
	} {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Result
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", data, err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Errorf("round trip of %s gave %+v, want %+v", data, back, r)
		}
	}
	data, _ := json.Marshal(Result{Type: Message, Status: OK})
	if string(data) != `{"type":"MESSAGE","status":"ok","summary":""}` {
		t.Errorf("a result without the new fields encodes as %s", data)
	}
}
