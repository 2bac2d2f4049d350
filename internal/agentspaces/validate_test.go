package agentspaces

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

// decodeOne decodes a message holding the one operation op and returns its
// command.
func decodeOne(t *testing.T, op string) command.Command {
	t.Helper()
	cmds, err := Decode([]byte(`{"protocolVersion": "1.0", "operations": [` + op + `]}`))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(cmds) != 1 {
		t.Fatalf("Decode gave %d commands, want 1", len(cmds))
	}
	return cmds[0]
}

// Every validation rule at its boundary: the last valid value runs, the
// first invalid one becomes a validation error that names the rule.
func TestValidationBoundaries(t *testing.T) {
	a255 := strings.Repeat("a", 255)
	nested255 := strings.Repeat("d/", 126) + "abc" // 252 + 3
	tests := []struct {
		name string
		op   string
		// wantErr is a part of the validation error; "" means valid.
		wantErr string
	}{
		{"path of 255 characters", `{"type": "readFile", "path": "` + a255 + `"}`, ""},
		{"nested path of 255 characters", `{"type": "readFile", "path": "` + nested255 + `"}`, ""},
		{"path of 256 characters", `{"type": "readFile", "path": "` + a255 + `b"}`, "is 256 characters long; the limit is 255"},
		{"path of 255 non-ASCII characters", `{"type": "readFile", "path": "` + strings.Repeat("é", 255) + `"}`, ""},
		{"path of 256 non-ASCII characters", `{"type": "readFile", "path": "` + strings.Repeat("é", 256) + `"}`, "256 characters"},
		{"absolute path", `{"type": "readFile", "path": "/etc/passwd"}`, `path "/etc/passwd" is absolute`},
		{"backslash absolute path", `{"type": "deleteFile", "path": "\\etc\\passwd"}`, "is absolute"},
		{"dot-dot segment", `{"type": "createFile", "path": "a/../b", "content": ""}`, `contains ".."`},
		{"leading dot-dot", `{"type": "editFile", "path": "../outside.txt", "edits": [{"oldContent": "a", "newContent": "b"}]}`, `contains ".."`},
		{"trailing dot-dot", `{"type": "deleteFile", "path": "a/.."}`, `contains ".."`},
		{"backslash dot-dot", `{"type": "deleteFile", "path": "a\\..\\..\\b"}`, `contains ".."`},
		{"dot-dot written as escapes", `{"type": "createFile", "path": "a/\u002e\u002e/b", "content": ""}`, `contains ".."`},
		{"slash written as an escape", `{"type": "deleteFile", "path": "\u002fetc/passwd"}`, "is absolute"},
		{"dots inside a name, as the protocol rules", `{"type": "readFile", "path": "notes..txt"}`, `path "notes..txt" contains ".."`},
		{"dots starting a name", `{"type": "readFile", "path": "src/..hidden"}`, `contains ".."`},
		{"one dot", `{"type": "readFile", "path": "./src/.env.example"}`, ""},
		{"NUL in path", `{"type": "readFile", "path": "file\u0000.txt"}`, "contains a NUL character"},
		{"empty path", `{"type": "readFile", "path": ""}`, "is empty"},
		{"missing path", `{"type": "deleteFile"}`, `"path" is required`},
		{"path not a string", `{"type": "deleteFile", "path": 7}`, `"path" must be a string, not a number`},

		{"command of 4096 characters", `{"type": "shell", "command": "` + strings.Repeat("x", 4096) + `"}`, ""},
		{"command of 4097 characters", `{"type": "shell", "command": "` + strings.Repeat("x", 4097) + `"}`, "is 4097 characters long; the limit is 4096"},
		{"empty command", `{"type": "shell", "command": "  "}`, `"command" is empty`},
		{"missing command", `{"type": "shell"}`, `"command" is required`},
		{"NUL in command", `{"type": "shell", "command": "ls\u0000x"}`, "NUL"},

		{"timeout 1000", `{"type": "shell", "command": "ls", "timeout": 1000}`, ""},
		{"timeout 999", `{"type": "shell", "command": "ls", "timeout": 999}`, "from 1000 to 3600000; got 999"},
		{"timeout 3600000", `{"type": "shell", "command": "ls", "timeout": 3600000}`, ""},
		{"timeout 3600001", `{"type": "shell", "command": "ls", "timeout": 3600001}`, "got 3600001"},
		{"timeout not an integer", `{"type": "shell", "command": "ls", "timeout": 1500.5}`, "integer"},
		{"timeout integral float", `{"type": "shell", "command": "ls", "timeout": 2e3}`, ""},
		{"timeout as a string", `{"type": "shell", "command": "ls", "timeout": "30000"}`, "integer"},
		{"cwd outside", `{"type": "shell", "command": "ls", "cwd": "../x"}`, `cwd "../x" contains ".."`},
		{"cwd absolute", `{"type": "shell", "command": "ls", "cwd": "/tmp"}`, "absolute"},
		{"env of strings", `{"type": "shell", "command": "ls", "env": {"DEBUG": "true"}}`, ""},
		{"env number", `{"type": "shell", "command": "ls", "env": {"DEBUG": 1}}`, `"DEBUG" must be a string, not a number`},
		{"env not an object", `{"type": "shell", "command": "ls", "env": ["A=1"]}`, `"env" must be an object`},
		{"env courier's tag", `{"type": "shell", "command": "ls", "env": {"COURIER_COMMAND": "x"}}`, "courier's own"},
		{"env bad name", `{"type": "shell", "command": "ls", "env": {"A=B": "x"}}`, "invalid variable name"},

		{"message of 100000 characters", `{"type": "message", "content": "` + strings.Repeat("m", 100000) + `"}`, ""},
		{"message of 100001 characters", `{"type": "message", "content": "` + strings.Repeat("m", 100001) + `"}`, "100001 characters long"},
		{"message without content", `{"type": "message"}`, `"content" is required`},

		{"edits empty", `{"type": "editFile", "path": "a", "edits": []}`, `"edits" is empty`},
		{"edits missing", `{"type": "editFile", "path": "a"}`, `"edits" is required`},
		{"edit without newContent", `{"type": "editFile", "path": "a", "edits": [{"oldContent": "x"}]}`, `edits[0]: "newContent" is required`},
		{"edit newContent number", `{"type": "editFile", "path": "a", "edits": [{"oldContent": "x", "newContent": 1}]}`, `"newContent" must be a string`},
		{"edit empty oldContent", `{"type": "editFile", "path": "a", "edits": [{"oldContent": "", "newContent": "x"}]}`, `"oldContent" is empty`},

		{"unknown type", `{"type": "runCommand", "command": "ls"}`, `"type" must be one of message, createFile, readFile, editFile, deleteFile, shell; got "runCommand"`},
		{"missing type", `{"command": "ls"}`, `"type" is required`},
		{"not an object", `"ls"`, "must be a JSON object, not a string"},
		{"id not a string", `{"type": "message", "id": 5, "content": "x"}`, `"id" must be a string`},
		{"encoding unknown", `{"type": "readFile", "path": "a", "encoding": "latin1"}`, `"utf-8" or "base64"`},
		{"overwrite not a bool", `{"type": "createFile", "path": "a", "content": "", "overwrite": "yes"}`, "true or false"},
		{"invalid base64", `{"type": "createFile", "path": "a", "content": "not base64!", "encoding": "base64"}`, "not valid base64"},
		{"unknown fields are ignored", `{"type": "deleteFile", "path": "a", "recursive": true, "x": {"y": 1}}`, ""},
		{"null optional fields are absent", `{"type": "shell", "command": "ls", "cwd": null, "timeout": null, "env": null, "id": null}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := decodeOne(t, tt.op)
			if tt.wantErr == "" {
				if c.Type == command.ParseError {
					t.Fatalf("valid operation refused: %s", c.Error)
				}
				return
			}
			if c.Type != command.ParseError {
				t.Fatalf("invalid operation accepted as %s", c.Type)
			}
			if !strings.Contains(c.Error, tt.wantErr) || !strings.HasPrefix(c.Error, "operation 1") {
				t.Errorf("error %q does not say %q", c.Error, tt.wantErr)
			}
		})
	}
}

// Base64 written without padding or wrapped in lines is accepted and
// passed on in the one form the engine decodes.
func TestBase64Forms(t *testing.T) {
	data := []byte("\x00\x01binary\xff")
	want := base64.StdEncoding.EncodeToString(data)
	for _, in := range []string{
		want,
		base64.RawStdEncoding.EncodeToString(data),
		want[:8] + `\n` + want[8:],
	} {
		c := decodeOne(t, `{"type": "createFile", "path": "b", "encoding": "base64", "content": "`+in+`"}`)
		if c.Content != want {
			t.Errorf("base64 %q became %q, want %q (%s)", in, c.Content, want, c.Error)
		}
	}
}

// Valid operations map onto commands with the flags that ask the engine
// for the protocol's semantics.
func TestMapping(t *testing.T) {
	tests := []struct {
		op   string
		want command.Command
	}{
		{`{"type": "message", "id": "msg-1", "content": "Processing data..."}`,
			command.Command{Type: command.Message, ID: "msg-1", Text: "Processing data..."}},
		{`{"type": "createFile", "id": "file-1", "path": "src/utils.ts", "content": "export const helper = () => {};", "encoding": "utf-8", "overwrite": false}`,
			command.Command{Type: command.CreateFile, ID: "file-1", Path: "src/utils.ts", Content: "export const helper = () => {};", NoOverwrite: true}},
		{`{"type": "createFile", "path": "a", "content": "x", "overwrite": true}`,
			command.Command{Type: command.CreateFile, Path: "a", Content: "x"}},
		{`{"type": "createFile", "path": "a.bin", "content": "AAE=", "encoding": "base64"}`,
			command.Command{Type: command.CreateFile, Path: "a.bin", Content: "AAE=", Encoding: command.Base64, NoOverwrite: true}},
		{`{"type": "readFile", "id": "read-1", "path": "config.json"}`,
			command.Command{Type: command.ReadFile, ID: "read-1", Path: "config.json", Inline: true}},
		{`{"type": "readFile", "path": "logo.png", "encoding": "base64"}`,
			command.Command{Type: command.ReadFile, Path: "logo.png", Inline: true, Encoding: command.Base64}},
		{`{"type": "editFile", "id": "edit-1", "path": "src/app.ts", "edits": [{"oldContent": "const x = 1;", "newContent": "const x = '$&';"}]}`,
			command.Command{Type: command.EditFile, ID: "edit-1", Path: "src/app.ts", Literal: true,
				Edits: []command.Edit{{Search: "const x = 1;", Replace: "const x = '$&';"}}}},
		{`{"type": "deleteFile", "id": "del-1", "path": "temp.txt"}`,
			command.Command{Type: command.DeleteFile, ID: "del-1", Path: "temp.txt"}},
		{`{"type": "shell", "id": "shell-1", "command": "bun run test.ts", "cwd": "src", "timeout": 30000, "env": {"DEBUG": "true"}}`,
			command.Command{Type: command.RunCommand, ID: "shell-1", Command: "bun run test.ts", Dir: "src",
				Timeout: command.Duration(30 * time.Second), Env: map[string]string{"DEBUG": "true"}, SplitOutput: true}},
		{`{"type": "shell", "command": "ls", "cwd": ""}`,
			command.Command{Type: command.RunCommand, Command: "ls", SplitOutput: true}},
	}
	for _, tt := range tests {
		got := decodeOne(t, tt.op)
		tt.want.Line = 1
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s\n got %+v\nwant %+v", tt.op, got, tt.want)
		}
	}
}

// A malformed operation takes its place in the batch and the others run:
// the seed's graceful degradation.
func TestInvalidOperationKeepsItsPlace(t *testing.T) {
	cmds, err := Decode([]byte(`{
  "protocolVersion": "1.0",
  "operations": [
    {"type": "createFile", "path": "a.ts", "content": "x"},
    {"type": "createFile", "id": "bad", "path": "/etc/passwd", "content": "x"},
    {"type": "shell", "command": "echo hello"}
  ]
}`))
	if err != nil {
		t.Fatal(err)
	}
	types := []command.Type{command.CreateFile, command.ParseError, command.RunCommand}
	if len(cmds) != 3 {
		t.Fatalf("got %d commands", len(cmds))
	}
	for i, c := range cmds {
		if c.Type != types[i] || c.Line != i+4 {
			t.Errorf("command %d is %s at line %d, want %s at line %d", i, c.Type, c.Line, types[i], i+4)
		}
	}
	if bad := cmds[1]; bad.ID != "bad" || bad.Error != `operation 2 (createFile) at line 5: path "/etc/passwd" is absolute; use a path relative to the workspace, without a leading "/"` {
		t.Errorf("the invalid operation gave %+v", bad)
	}
}
