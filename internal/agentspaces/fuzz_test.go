package agentspaces

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

// FuzzParseReply checks what must hold for any reply and any program's
// message: nothing panics; parsing is deterministic; every command that
// is not a ParseError obeys the protocol's rules (so nothing invalid
// reaches the engine); broken messages give a bounded number of entries;
// a message that strict decoding accepts gives the same commands when
// read as a chat reply; and every event encodes.
func FuzzParseReply(f *testing.F) {
	f.Add(`{"protocolVersion": "1.0", "operations": [{"type": "shell", "command": "ls", "timeout": 1000}]}`)
	f.Add("Sure:\n```json\n{\"operations\": [{\"type\": \"createFile\", \"path\": \"a\", \"content\": \"x\",}, // c\n]}\n```\n")
	f.Add(`{"operations": [{"type": "editFile", "path": "a", "edits": [{"oldContent": "a", "newContent": "$&"}]}]} {"operations": [`)
	f.Add(`{"operations": [{"type": "createFile", "path": "b", "encoding": "base64", "content": "AAE"}, {"type": "readFile", "path": "/x"}]}`)
	f.Add(`{ "a": [ { "operations" /* x */ : [ ] } ] ] } {"operations":[{"type":"message","content":"hi"}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		r := ParseReply(text)
		if again := ParseReply(text); !reflect.DeepEqual(r, again) {
			t.Fatal("ParseReply is not deterministic")
		}
		problems := 0
		for i, c := range r.Commands {
			if c.Type == command.ParseError && c.Line > 0 && strings.HasPrefix(c.Error, "the operations message") {
				problems++
			}
			if c.Type == command.Done && i != len(r.Commands)-1 {
				t.Fatalf("DONE at %d of %d", i, len(r.Commands))
			}
			checkValidCommand(t, c)
		}
		if problems > maxProblems {
			t.Fatalf("%d entries for broken messages", problems)
		}
		cmds, err := Decode([]byte(text))
		for _, c := range cmds {
			checkValidCommand(t, c)
		}
		if err == nil {
			lenient := append([]command.Command(nil), r.Commands...)
			if n := len(lenient); n > 0 && lenient[n-1].Type == command.Done {
				lenient[n-1].Type = command.Message
			}
			if len(cmds) == 0 && len(lenient) == 0 {
				return
			}
			if !reflect.DeepEqual(cmds, lenient) {
				t.Fatalf("strict and lenient reading differ:\nstrict  %+v\nlenient %+v", cmds, lenient)
			}
		}
		o := Outcome{Commands: r.Commands}
		for _, c := range r.Commands {
			o.Results = append(o.Results, command.Result{Type: c.Type, Status: command.Failed, Summary: c.Error, Content: c.Content})
		}
		if _, err := FormatEvents(Events("r", o, time.Now())); err != nil {
			t.Fatal(err)
		}
	})
}

// checkValidCommand fails if a command that reaches the engine breaks a
// rule of the protocol.
func checkValidCommand(t *testing.T, c command.Command) {
	t.Helper()
	if c.Type == command.ParseError {
		if c.Error == "" {
			t.Fatal("ParseError without an explanation")
		}
		return
	}
	if c.Line < 1 {
		t.Fatalf("%s without a line", c.Type)
	}
	switch c.Type {
	case command.CreateFile, command.ReadFile, command.EditFile, command.DeleteFile:
		if err := checkPath(c.Path); err != nil {
			t.Fatalf("%s with path %q: %v", c.Type, c.Path, err)
		}
	}
	switch c.Type {
	case command.CreateFile:
		if contentSize(c.Content, c.Encoding) > MaxContentBytes {
			t.Fatal("content over the limit")
		}
	case command.EditFile:
		if len(c.Edits) == 0 || !c.Literal {
			t.Fatalf("edit without pairs or not literal: %+v", c)
		}
		for _, e := range c.Edits {
			if e.Search == "" {
				t.Fatal("empty oldContent")
			}
		}
	case command.RunCommand:
		if strings.TrimSpace(c.Command) == "" || chars(c.Command) > MaxCommandChars || strings.IndexByte(c.Command, 0) >= 0 {
			t.Fatalf("bad command %q", c.Command)
		}
		if c.Timeout != 0 && (time.Duration(c.Timeout) < MinTimeoutMS*time.Millisecond || time.Duration(c.Timeout) > MaxTimeoutMS*time.Millisecond) {
			t.Fatalf("timeout %s out of range", c.Timeout)
		}
		if c.Dir != "" && checkPath(c.Dir) != nil {
			t.Fatalf("bad cwd %q", c.Dir)
		}
		for k := range c.Env {
			if strings.HasPrefix(strings.ToUpper(k), reservedEnvPrefix) || k == "" || strings.ContainsAny(k, "=\x00") {
				t.Fatalf("bad env name %q", k)
			}
		}
		if !c.SplitOutput {
			t.Fatal("shell without separate streams")
		}
	case command.ReadFile:
		if !c.Inline {
			t.Fatal("readFile not inline")
		}
	case command.DeleteFile:
	case command.Message, command.Done:
		if chars(c.Text) > MaxMessageChars {
			t.Fatal("message over the limit")
		}
	default:
		t.Fatalf("unexpected command type %s", c.Type)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	}
}
