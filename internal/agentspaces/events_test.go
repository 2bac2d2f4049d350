package agentspaces

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

var (
	t0   = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	zero = 0
	one  = 1
)

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each result becomes the event the protocol specifies, in its exact
// shape: false, zero and empty values it shows are written, fields of
// other types are not.
func TestResultEvent(t *testing.T) {
	shell := command.Command{Type: command.RunCommand, ID: "shell-1", Command: "bun run test.ts", SplitOutput: true}
	tests := []struct {
		name string
		c    command.Command
		r    command.Result
		want string
	}{
		{"message", command.Command{Type: command.Message, ID: "msg-1", Text: "hi"}, command.Result{Status: command.OK},
			`{"type":"message","operationId":"msg-1","timestamp":"2025-01-15T10:30:00.000Z","success":true}`},
		{"final message", command.Command{Type: command.Done, Text: "Done!"}, command.Result{Status: command.OK},
			`{"type":"message","timestamp":"2025-01-15T10:30:00.000Z","success":true}`},
		{"createFile", command.Command{Type: command.CreateFile, ID: "file-1", Path: "src/utils.ts", Content: "export const helper = () => {};"},
			command.Result{Status: command.OK, Summary: "Created 'src/utils.ts' (1 line)"},
			`{"type":"createFile","operationId":"file-1","timestamp":"2025-01-15T10:30:00.000Z","path":"src/utils.ts","success":true,"bytesWritten":31}`},
		{"createFile base64", command.Command{Type: command.CreateFile, Path: "a.bin", Content: "AAECAw==", Encoding: command.Base64},
			command.Result{Status: command.OK},
			`{"type":"createFile","timestamp":"2025-01-15T10:30:00.000Z","path":"a.bin","success":true,"bytesWritten":4}`},
		{"createFile exists", command.Command{Type: command.CreateFile, Path: "src/utils.ts", Content: "x", NoOverwrite: true},
			command.Result{Status: command.Failed, Cause: command.CauseExists, Summary: "File 'src/utils.ts' already exists"},
			`{"type":"createFile","timestamp":"2025-01-15T10:30:00.000Z","path":"src/utils.ts","success":false,"error":"File already exists"}`},
		{"readFile", command.Command{Type: command.ReadFile, ID: "read-1", Path: "config.json", Inline: true},
			command.Result{Status: command.OK, Content: `{"key": "value"}`, Size: 16},
			`{"type":"readFile","operationId":"read-1","timestamp":"2025-01-15T10:30:00.000Z","path":"config.json","success":true,"content":"{\"key\": \"value\"}","encoding":"utf-8","size":16}`},
		{"readFile empty", command.Command{Type: command.ReadFile, Path: "empty", Inline: true}, command.Result{Status: command.OK},
			`{"type":"readFile","timestamp":"2025-01-15T10:30:00.000Z","path":"empty","success":true,"content":"","encoding":"utf-8","size":0}`},
		{"readFile binary", command.Command{Type: command.ReadFile, Path: "logo.png", Inline: true},
			command.Result{Status: command.OK, Content: "iVBORw==", Encoding: command.Base64, Size: 4},
			`{"type":"readFile","timestamp":"2025-01-15T10:30:00.000Z","path":"logo.png","success":true,"content":"iVBORw==","encoding":"base64","size":4}`},
		{"readFile missing", command.Command{Type: command.ReadFile, Path: "nonexistent.txt", Inline: true},
			command.Result{Status: command.Failed, Cause: command.CauseNotFound, Summary: "File 'nonexistent.txt' not found"},
			`{"type":"readFile","timestamp":"2025-01-15T10:30:00.000Z","path":"nonexistent.txt","success":false,"error":"File not found"}`},
		{"editFile", command.Command{Type: command.EditFile, Path: "src/app.ts", Literal: true, Edits: []command.Edit{{Search: "a", Replace: "b"}, {Search: "c", Replace: "d"}}},
			command.Result{Status: command.OK},
			`{"type":"editFile","timestamp":"2025-01-15T10:30:00.000Z","path":"src/app.ts","success":true,"editsApplied":2}`},
		{"editFile no match", command.Command{Type: command.EditFile, Path: "src/app.ts", Literal: true, Edits: []command.Edit{{Search: "a", Replace: "b"}}},
			command.Result{Status: command.Failed, Summary: "Edit of 'src/app.ts' failed, file unchanged: oldContent of edit 1 not found", Output: "closest: line 3"},
			`{"type":"editFile","timestamp":"2025-01-15T10:30:00.000Z","path":"src/app.ts","success":false,"error":"Edit of 'src/app.ts' failed, file unchanged: oldContent of edit 1 not found\nclosest: line 3"}`},
		{"deleteFile", command.Command{Type: command.DeleteFile, ID: "del-1", Path: "temp.txt"}, command.Result{Status: command.OK},
			`{"type":"deleteFile","operationId":"del-1","timestamp":"2025-01-15T10:30:00.000Z","path":"temp.txt","success":true}`},
		{"shell", shell, command.Result{Status: command.OK, ExitCode: &zero, Stdout: "All tests passed!\n", DurationMS: 1234, Output: "ignored"},
			`{"type":"shell","operationId":"shell-1","timestamp":"2025-01-15T10:30:00.000Z","command":"bun run test.ts","success":true,"exitCode":0,"stdout":"All tests passed!\n","stderr":"","durationMs":1234}`},
		{"shell failing", shell, command.Result{Status: command.Failed, ExitCode: &one, Stderr: "1 test failed\n", DurationMS: 80, Summary: "Ran 'bun run test.ts' (exit code 1)"},
			`{"type":"shell","operationId":"shell-1","timestamp":"2025-01-15T10:30:00.000Z","command":"bun run test.ts","success":false,"exitCode":1,"stdout":"","stderr":"1 test failed\n","durationMs":80}`},
		{"shell timed out", command.Command{Type: command.RunCommand, Command: "sleep 1000", SplitOutput: true},
			command.Result{Status: command.Failed, TimedOut: true, DurationMS: 30000, Summary: "Command 'sleep 1000' timed out"},
			`{"type":"shell","timestamp":"2025-01-15T10:30:00.000Z","command":"sleep 1000","success":false,"timedOut":true,"exitCode":124,"durationMs":30000}`},
		{"shell timed out after output", command.Command{Type: command.RunCommand, Command: "make", SplitOutput: true},
			command.Result{Status: command.Failed, TimedOut: true, Stdout: "building\n", DurationMS: 1000},
			`{"type":"shell","timestamp":"2025-01-15T10:30:00.000Z","command":"make","success":false,"timedOut":true,"exitCode":124,"stdout":"building\n","durationMs":1000}`},
		{"shell could not start", shell, command.Result{Status: command.Failed, Summary: "Working folder 'src' not found"},
			`{"type":"shell","operationId":"shell-1","timestamp":"2025-01-15T10:30:00.000Z","command":"bun run test.ts","success":false,"error":"Working folder 'src' not found"}`},
		{"shell without split output", command.Command{Type: command.RunCommand, Command: "ls"}, command.Result{Status: command.OK, ExitCode: &zero, Output: "a\n"},
			`{"type":"shell","timestamp":"2025-01-15T10:30:00.000Z","command":"ls","success":true,"exitCode":0,"stdout":"a\n","stderr":"","durationMs":0}`},
		{"policy denial", command.Command{Type: command.RunCommand, Command: "sudo rm x"},
			command.Result{Status: command.Denied, Cause: command.CausePolicy, Reason: "`sudo` is denied: privilege escalation is never run by courier", Summary: "Not run: ..."},
			"{\"type\":\"policyDenied\",\"timestamp\":\"2025-01-15T10:30:00.000Z\",\"operationType\":\"shell\",\"reason\":\"`sudo` is denied: privilege escalation is never run by courier\",\"suggestion\":\"" + suggestPolicy + "\"}"},
		{"person's denial", command.Command{Type: command.RunCommand, ID: "cleanup-1", Command: "rm -rf temp/*"},
			command.Result{Status: command.Denied, Cause: command.CausePerson, Reason: "keep temp", Summary: "Not run: the person denied 'rm -rf temp/*': keep temp. Find another way"},
			`{"type":"policyDenied","operationId":"cleanup-1","timestamp":"2025-01-15T10:30:00.000Z","operationType":"shell","reason":"The user denied it: keep temp","suggestion":"` + suggestPerson + `"}`},
		{"person's denial without words", command.Command{Type: command.RunCommand, Command: "git push"},
			command.Result{Status: command.Denied, Cause: command.CausePerson},
			`{"type":"policyDenied","timestamp":"2025-01-15T10:30:00.000Z","operationType":"shell","reason":"The user denied it","suggestion":"` + suggestPerson + `"}`},
		{"path outside through a link", command.Command{Type: command.CreateFile, Path: "link/x"},
			command.Result{Status: command.Rejected, Summary: "REJECTED: Path 'link/x' is outside workspace", Reason: "Path 'link/x' is outside workspace"},
			`{"type":"policyDenied","timestamp":"2025-01-15T10:30:00.000Z","operationType":"createFile","reason":"Path 'link/x' is outside workspace","suggestion":"` + suggestOutside + `"}`},
		{"validation", command.Command{Type: command.ParseError, ID: "x", Error: "operation 2 (shell) at line 4: \"command\" is required"}, command.Result{Status: command.Failed},
			`{"type":"error","operationId":"x","timestamp":"2025-01-15T10:30:00.000Z","category":"validation","message":"operation 2 (shell) at line 4: \"command\" is required"}`},
		{"interrupted", command.Command{Type: command.RunCommand, Command: "make"},
			command.Result{Status: command.Interrupted, Summary: "Command 'make' was interrupted (courier stopped while it ran); it was not run again"},
			`{"type":"error","timestamp":"2025-01-15T10:30:00.000Z","category":"execution","message":"Command 'make' was interrupted (courier stopped while it ran); it was not run again","details":{"operationType":"shell"}}`},
		{"run deadline", command.Command{Type: command.RunCommand, Command: "make"},
			command.Result{Status: command.Interrupted, Cause: command.CauseDeadline, Summary: "stopped"},
			`{"type":"error","timestamp":"2025-01-15T10:30:00.000Z","category":"timeout","message":"stopped","details":{"operationType":"shell"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := encode(t, ResultEvent(tt.c, tt.r, t0)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// The engine's finish time is the event's time; "now" only fills in.
func TestResultEventTime(t *testing.T) {
	finished := t0.Add(1500 * time.Millisecond).In(time.FixedZone("CET", 3600))
	e := ResultEvent(command.Command{Type: command.Message}, command.Result{Status: command.OK, Time: finished}, t0)
	if got := encode(t, e); !strings.Contains(got, `"timestamp":"2025-01-15T10:30:01.500Z"`) {
		t.Errorf("event %s does not carry the finish time in UTC", got)
	}
}

// Code and output keep their <, > and & when encoded, for the LLM and the
// person reading them.
func TestNoHTMLEscaping(t *testing.T) {
	e := ResultEvent(command.Command{Type: command.RunCommand, Command: "a && b > c", SplitOutput: true},
		command.Result{Status: command.OK, ExitCode: &zero, Stdout: "<html>\n"}, t0)
	text, err := FormatEvents(EventsMessage{ProtocolVersion: "1.0", RunID: "r", Status: StatusCompleted, Events: []Event{e}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"command": "a && b > c"`, `"stdout": "<html>\n"`} {
		if !strings.Contains(text, want) {
			t.Errorf("FormatEvents lacks %s:\n%s", want, text)
		}
	}
}

// The run's status follows how it ended, and the approval pauses it with
// the events so far.
func TestEventsStatus(t *testing.T) {
	cmds := []command.Command{
		{Type: command.Message, Text: "I need to clean up the temp directory."},
		{Type: command.RunCommand, ID: "cleanup-1", Command: "rm -rf temp/*", SplitOutput: true},
		{Type: command.Message, Text: "after"},
	}
	ok := command.Result{Status: command.OK}
	pause := &Pause{Index: 1, Reason: "`rm -rf temp/*` needs approval: recursive or forced delete", Rule: "rm -r"}

	m := Events("run_del456", Outcome{Commands: cmds, Results: []command.Result{ok}, Paused: pause}, t0)
	want := `{"protocolVersion":"1.0","runId":"run_del456","status":"awaiting_approval","events":[` +
		`{"type":"message","timestamp":"2025-01-15T10:30:00.000Z","success":true},` +
		"{\"type\":\"approvalRequired\",\"operationId\":\"cleanup-1\",\"timestamp\":\"2025-01-15T10:30:00.000Z\",\"operationType\":\"shell\",\"reason\":\"`rm -rf temp/*` needs approval: recursive or forced delete\",\"details\":{\"command\":\"rm -rf temp/*\",\"policy\":\"rm -r\"}}]}"
	if got := encode(t, m); got != want {
		t.Errorf("paused run:\n got %s\nwant %s", got, want)
	}

	resumed := []command.Result{ok, {Status: command.OK, ExitCode: &zero, DurationMS: 45}, ok}
	m = Events("run_del456", Outcome{Commands: cmds, Results: resumed, From: 1}, t0)
	if m.Status != StatusCompleted || len(m.Events) != 2 || m.Events[0].Type != EventShell || m.Events[0].OperationID != "cleanup-1" {
		t.Errorf("resumed run: %s", encode(t, m))
	}

	m = Events("r", Outcome{Commands: cmds, Results: []command.Result{ok}, Err: errors.New("write journal: no space left on device")}, t0)
	if m.Status != StatusError || len(m.Events) != 2 {
		t.Fatalf("stopped run: %s", encode(t, m))
	}
	if got := encode(t, m.Events[1]); got != `{"type":"error","operationId":"cleanup-1","timestamp":"2025-01-15T10:30:00.000Z","category":"system","message":"courier stopped the run at this operation, which did not run, nor did the ones after it: write journal: no space left on device","details":{"operationType":"shell"}}` {
		t.Errorf("system failure event: %s", got)
	}

	// Where courier keeps its files on the host never reaches the events.
	host := fmt.Errorf("journal: %w", &fs.PathError{Op: "write", Path: "/home/me/courier/sessions/r/turns/0001/journal.jsonl", Err: syscall.ENOSPC})
	m = Events("r", Outcome{Commands: cmds, Err: host}, t0)
	if got := m.Events[0].Message; strings.Contains(got, "/home/me") || !strings.Contains(got, "journal: write …/journal.jsonl: no space left on device") {
		t.Errorf("a host path in the event: %s", got)
	}

	_, err := Decode([]byte(`{"protocolVersion": "2.0", "operations": []}`))
	m = Events("r", Outcome{Err: err}, t0)
	if got := encode(t, m); got != `{"protocolVersion":"1.0","runId":"r","status":"error","events":[{"type":"error","timestamp":"2025-01-15T10:30:00.000Z","category":"validation","message":"\"protocolVersion\" is \"2.0\"; courier speaks protocol version \"1.0\" only","details":{"line":1}}]}` {
		t.Errorf("unreadable message: %s", got)
	}

	if got := encode(t, Events("r", Outcome{}, t0)); got != `{"protocolVersion":"1.0","runId":"r","status":"completed","events":[]}` {
		t.Errorf("empty run: %s", got)
	}
}

// An operation sent without an id still gets one to approve it by.
func TestApprovalIDWithoutID(t *testing.T) {
	c := command.Command{Type: command.RunCommand, Command: "git push"}
	e := ApprovalEvent(c, Pause{Index: 2, Reason: "r", Rule: "git push"}, t0)
	if e.OperationID != "operation-3" || ApprovalID(c, 2) != "operation-3" {
		t.Errorf("approval id %q", e.OperationID)
	}
}
