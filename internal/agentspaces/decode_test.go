package agentspaces

import (
	"errors"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

// A message that cannot run as a whole is a MessageError saying where and
// why; nothing of it becomes a command.
func TestDecodeMessageErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
		line           int
	}{
		{"empty", "", "the JSON ends before the message is complete", 1},
		{"not JSON", "run ls please", "not valid JSON at line 1, column 1: invalid character 'r'", 1},
		{"truncated", "{\"protocolVersion\": \"1.0\",\n \"operations\": [\n {\"type\": \"message\"", "not valid JSON at line 3, column 20: the JSON ends before the message is complete", 3},
		{"trailing comma", `{"protocolVersion": "1.0", "operations": [],}`, "invalid character '}' looking for beginning of object key string", 1},
		{"comment", "{\"protocolVersion\": \"1.0\", // v1\n\"operations\": []}", "invalid character '/'", 1},
		{"raw line break", "{\"protocolVersion\": \"1.0\", \"operations\": [{\"type\": \"message\", \"content\": \"a\nb\"}]}", `write a line break as \n`, 1},
		{"array", `[{"type": "message", "content": "x"}]`, "must be a JSON object, not an array", 1},
		{"no version", `{"operations": []}`, `no "protocolVersion"`, 1},
		{"wrong version", `{"protocolVersion": "2.0", "operations": []}`, `"protocolVersion" is "2.0"; courier speaks protocol version "1.0" only`, 1},
		{"version number", `{"protocolVersion": 1.0, "operations": []}`, `"protocolVersion" is 1.0`, 1},
		{"no operations", `{"protocolVersion": "1.0"}`, `no "operations" array`, 1},
		{"operations object", `{"protocolVersion": "1.0", "operations": {"type": "message"}}`, `"operations" must be an array of operations, not an object`, 1},
		{"operations null", `{"protocolVersion": "1.0", "operations": null}`, `not null`, 1},
		{"operations twice", `{"protocolVersion": "1.0", "operations": [], "operations": []}`, `"operations" appears twice`, 1},
		{"two objects", "{\"protocolVersion\": \"1.0\", \"operations\": []}\n{}", "unexpected data after the operations message at line 2, column 1", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := Decode([]byte(tt.in))
			var me *MessageError
			if !errors.As(err, &me) {
				t.Fatalf("Decode gave %v, %v; want a MessageError", cmds, err)
			}
			if cmds != nil {
				t.Errorf("a broken message gave commands: %v", cmds)
			}
			if !strings.Contains(me.Reason, tt.want) || me.Line != tt.line {
				t.Errorf("error at line %d: %q; want line %d and %q", me.Line, me.Reason, tt.line, tt.want)
			}
		})
	}
}

// A byte order mark and surrounding whitespace are not errors, and an
// empty batch is valid.
func TestDecodeAccepts(t *testing.T) {
	cmds, err := Decode([]byte("\ufeff\n  {\"protocolVersion\": \"1.0\", \"operations\": [], \"note\": {\"x\": [1]}}\n\n"))
	if err != nil || len(cmds) != 0 {
		t.Errorf("Decode = %v, %v", cmds, err)
	}
	cmds, err = Decode([]byte(`{"operations": [{"type": "message", "content": "hi"}], "protocolVersion": "1.0"}`))
	if err != nil || len(cmds) != 1 || cmds[0].Type != command.Message {
		t.Errorf("members in another order: %v, %v", cmds, err)
	}
	// A program's message is not a chat reply: message operations alone
	// do not end anything.
	if cmds[0].Type == command.Done {
		t.Error("Decode marked a final response")
	}
}

// Messages larger than the limit are refused before they are parsed.
func TestDecodeTooLarge(t *testing.T) {
	big := make([]byte, MaxMessageBytes+1)
	if _, err := Decode(big); err == nil || !strings.Contains(err.Error(), "larger than the 64 MiB limit") {
		t.Errorf("Decode of a message over the limit = %v", err)
	}
	if r := ParseReply(string(big)); len(r.Commands) != 1 || !strings.Contains(r.Commands[0].Error, "larger than 64 MiB") {
		t.Errorf("ParseReply of a reply over the limit = %+v", r.Commands)
	}
}

// Elements that are not objects are validation errors in their place,
// named by their kind.
func TestDecodeNonObjectOperations(t *testing.T) {
	cmds, err := Decode([]byte(`{"protocolVersion": "1.0", "operations": [[1], true, null, 2, "x", {"type": "message", "content": "ok"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"an array", "a boolean", "null", "a number", "a string"}
	for i, kind := range want {
		if c := cmds[i]; c.Type != command.ParseError || !strings.HasSuffix(c.Error, "must be a JSON object, not "+kind) {
			t.Errorf("element %d: %s %q", i, c.Type, c.Error)
		}
	}
	if cmds[5].Type != command.Message {
		t.Errorf("the valid operation after them is %s", cmds[5].Type)
	}
}

// A message may hold at most MaxOperations operations; one more makes it
// unreadable as a whole rather than a million events.
func TestDecodeOperationLimit(t *testing.T) {
	op := `{"type": "message", "content": "x"},`
	for _, n := range []int{MaxOperations, MaxOperations + 1} {
		in := `{"protocolVersion": "1.0", "operations": [` + strings.TrimSuffix(strings.Repeat(op, n), ",") + `]}`
		cmds, err := Decode([]byte(in))
		if n == MaxOperations && (err != nil || len(cmds) != n) {
			t.Errorf("%d operations: %d commands, %v", n, len(cmds), err)
		}
		if n > MaxOperations && (err == nil || !strings.Contains(err.Error(), "more than 10000 operations")) {
			t.Errorf("%d operations: %d commands, %v", n, len(cmds), err)
		}
		r := ParseReply(in)
		if n > MaxOperations && (len(r.Commands) != 1 || !strings.Contains(r.Commands[0].Error, "more than 10000 operations")) {
			t.Errorf("as a reply, %d operations gave %d commands", n, len(r.Commands))
		}
	}
	// Across the messages of one reply, too.
	half := `{"operations": [` + strings.TrimSuffix(strings.Repeat(op, MaxOperations/2+1), ",") + `]}`
	r := ParseReply(half + "\n" + half)
	if n := len(r.Commands); n != MaxOperations/2+2 || !strings.Contains(r.Commands[n-1].Error, "the reply has more than 10000 operations") {
		t.Errorf("two halves gave %d commands, the last %q", n, r.Commands[n-1].Error)
	}
}
