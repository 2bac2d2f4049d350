package agentspaces

import (
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

const fence = "```"

// summary lists a reply's commands as "TYPE:detail" for comparison.
func summary(cmds []command.Command) []string {
	var out []string
	for _, c := range cmds {
		d := c.Path + c.Command + c.Text
		if c.Type == command.ParseError {
			d = c.Error
		}
		out = append(out, string(c.Type)+":"+d)
	}
	return out
}

// Replies in the shapes chat interfaces produce give the operations the
// LLM meant, in order.
func TestParseReplyShapes(t *testing.T) {
	msg := `{"protocolVersion": "1.0", "operations": [{"type": "createFile", "path": "a.txt", "content": "x"}, {"type": "shell", "command": "cat a.txt"}]}`
	want := []string{"CREATE_FILE:a.txt", "RUN_COMMAND:cat a.txt"}
	tests := []struct {
		name, reply string
		want        []string
	}{
		{"json fence with prose", "Sure! Here is the plan.\n\n" + fence + "json\n" + msg + "\n" + fence + "\n\nLet me know.", want},
		{"fence without a tag", fence + "\n" + msg + "\n" + fence, want},
		{"fence with another tag", fence + "javascript\n" + msg + "\n" + fence, want},
		{"tilde fence", "~~~json\n" + msg + "\n~~~", want},
		{"bare JSON", msg, want},
		{"bare JSON after prose on the same line", "Operations: " + msg + " (that's all)", want},
		{"indented in a list item", "1. Run this:\n\n    " + strings.ReplaceAll(msg, "\n", "\n    "), want},
		{"pretty printed with trailing commas and comments", fence + `json
{
  "protocolVersion": "1.0", // always 1.0
  /* first the file,
     then the check */
  "operations": [
    {"type": "createFile", "path": "a.txt", "content": "x",},
    {"type": "shell", "command": "cat a.txt"}, // prints x
  ],
}
` + fence, want},
		{"version left out", `{"operations": [{"type": "createFile", "path": "a.txt", "content": "x"}, {"type": "shell", "command": "cat a.txt"}]}`, want},
		{"several objects in order", fence + "json\n" + `{"protocolVersion": "1.0", "operations": [{"type": "createFile", "path": "a.txt", "content": "x"}]}` + "\n" + fence +
			"\nThen:\n" + fence + "json\n" + `{"protocolVersion": "1.0", "operations": [{"type": "shell", "command": "cat a.txt"}]}` + "\n" + fence, want},
		{"objects in one array", `[{"operations": [{"type": "createFile", "path": "a.txt", "content": "x"}]}, {"operations": [{"type": "shell", "command": "cat a.txt"}]}]`, want},
		{"stray brace in prose before", "I'll fix the {bug\n" + fence + "json\n" + msg + "\n" + fence, want},
		{"stray quoted brace in prose before", "Use `{\"x\"` as the key\n" + fence + "json\n" + msg + "\n" + fence, want},
		{"other JSON is ignored", "The config is `{\"port\": 8080}` and the schema:\n" + fence + "json\n{\"type\": \"object\"}\n" + fence + "\n" + msg, want},
		{"braces and comment markers in strings", `{"operations": [{"type": "createFile", "path": "a.txt", "content": "{ /* not a comment */ // nor this\n}\"]"}, {"type": "shell", "command": "cat a.txt"}]}`, want},
		{"markdown fence inside content", `{"operations": [{"type": "createFile", "path": "a.txt", "content": "# Title\n` + fence + `sh\nmake\n` + fence + `\n"}, {"type": "shell", "command": "cat a.txt"}]}`, want},
		{"CRLF line ends", strings.ReplaceAll(fence+"json\n"+msg+"\n"+fence+"\n", "\n", "\r\n"), want},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(ParseReply(tt.reply).Commands)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// What cannot be used comes back as a validation error that says where
// and why, and none of a broken message runs.
func TestParseReplyProblems(t *testing.T) {
	tests := []struct {
		name, reply string
		want        []string // parts of each command's summary
	}{
		{"no JSON", "I think we should use Python. Shall I?", []string{"PARSE_ERROR:your reply holds no operations message"}},
		{"unrelated JSON only", "```json\n{\"name\": \"demo\"}\n```", []string{"PARSE_ERROR:your reply holds no operations message"}},
		{"operations only as a value", `{"protocolVersion": "2.0", "note": "operations"}`, []string{"PARSE_ERROR:your reply holds no operations message"}},
		{"lone operation", "```json\n{\"type\": \"shell\", \"command\": \"ls\"}\n```", []string{"The shell operation at line 2 is not inside an operations message"}},
		{"cut off", "Here:\n```json\n{\"protocolVersion\": \"1.0\", \"operations\": [\n  {\"type\": \"createFile\", \"path\": \"a\", \"content\": \"x\"},\n  {\"type\": \"shell\", \"comm",
			[]string{"PARSE_ERROR:the operations message at line 3 was not run: not valid JSON at line 5"}},
		{"missing comma", "{\"operations\": [\n{\"type\": \"message\", \"content\": \"a\"}\n{\"type\": \"message\", \"content\": \"b\"}]}",
			[]string{"PARSE_ERROR:the operations message at line 1 was not run: not valid JSON at line 3, column 1: invalid character '{' after array element"}},
		{"mismatched bracket", "{\"operations\": [{\"type\": \"message\", \"content\": \"a\"}}\n",
			[]string{"PARSE_ERROR:the operations message at line 1 was not run: not valid JSON at line 1, column 52: invalid character '}' after array element"}},
		{"raw line break in a string", "{\"operations\": [{\"type\": \"createFile\", \"path\": \"a.py\", \"content\": \"print(1)\nprint(2)\"}]}",
			[]string{`write a line break as \n`}},
		{"single quotes", "{'operations': [{'type': 'message', 'content': 'hi'}]}", []string{"PARSE_ERROR:your reply holds no operations message"}},
		{"wrong version", `{"protocolVersion": "2.0", "operations": [{"type": "message", "content": "hi"}]}`,
			[]string{`PARSE_ERROR:the operations message at line 1 was not run: "protocolVersion" is "2.0"`}},
		{"operations not an array", `{"operations": "ls"}`, []string{`"operations" must be an array of operations, not a string`}},
		{"one good message, one broken", "{\"operations\": [{\"type\": \"shell\", \"command\": \"ls\"}]}\n{\"operations\": [{\"type\": \"shell\", \"command\": \"pwd\"},]",
			[]string{"RUN_COMMAND:ls", "PARSE_ERROR:the operations message at line 2 was not run"}},
		{"invalid operation among valid", `{"operations": [{"type": "shell", "command": "ls"}, {"type": "shell", "command": "ls", "timeout": 10}, {"type": "message", "content": "x"}]}`,
			[]string{"RUN_COMMAND:ls", `PARSE_ERROR:operation 2 (shell) at line 1: "timeout" must be an integer`, "MESSAGE:x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(ParseReply(tt.reply).Commands)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d commands, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("command %d is\n  %s\nwant it to contain\n  %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// A reply of message operations only is the final response: its last
// message ends the session. Anything else in the reply keeps it going.
func TestParseReplyFinal(t *testing.T) {
	r := ParseReply(`{"protocolVersion": "1.0", "operations": [{"type": "message", "content": "All tests pass."}, {"type": "message", "content": "Done! I created a reminder."}]}`)
	if got := summary(r.Commands); strings.Join(got, "|") != "MESSAGE:All tests pass.|DONE:Done! I created a reminder." {
		t.Errorf("final reply gave %v", got)
	}
	for _, reply := range []string{
		`{"operations": [{"type": "message", "content": "Next I'll test."}, {"type": "shell", "command": "make test"}]}`,
		`{"operations": [{"type": "message", "content": "x"}, {"type": "message"}]}`,
		`{"operations": []}`,
	} {
		for _, c := range ParseReply(reply).Commands {
			if c.Type == command.Done {
				t.Errorf("%s ended the session", reply)
			}
		}
	}
}

// The session and sequence copied from the request route the reply.
func TestParseReplyRouting(t *testing.T) {
	r := ParseReply("```json\n{\"protocolVersion\": \"1.0\", \"session\": \"A1B2C3D4\", \"sequence\": 3, \"operations\": []}\n```")
	if r.Session != "a1b2c3d4" || r.Sequence != 3 {
		t.Errorf("routing = %q, %d", r.Session, r.Sequence)
	}
	r = ParseReply(`{"session": "a1b2c3d4", "sequence": "4", "operations": []} {"session": "ffffffff", "sequence": 9, "operations": []}`)
	if r.Session != "a1b2c3d4" || r.Sequence != 4 {
		t.Errorf("the first message's routing should count: %q, %d", r.Session, r.Sequence)
	}
	if r := ParseReply(`{"operations": [], "sequence": -2}`); r.Session != "" || r.Sequence != 0 {
		t.Errorf("no routing gave %q, %d", r.Session, r.Sequence)
	}
	if len(ParseReply(`{"operations": []}`).Commands) != 0 {
		t.Error("an empty operations list gave commands")
	}
}

// A hostile reply full of broken messages gets a bounded number of error
// entries, not one per message.
func TestParseReplyCapsProblems(t *testing.T) {
	reply := strings.Repeat("{\"operations\": [}\n", 5000)
	cmds := ParseReply(reply).Commands
	if len(cmds) != maxProblems+1 {
		t.Fatalf("got %d commands, want %d", len(cmds), maxProblems+1)
	}
	if last := cmds[len(cmds)-1]; last.Error != "4900 more broken operations messages were not run" {
		t.Errorf("last entry: %q", last.Error)
	}
	if cmds[99].Line != 100 {
		t.Errorf("entry 100 is at line %d", cmds[99].Line)
	}
}
