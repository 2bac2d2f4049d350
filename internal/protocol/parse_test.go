package protocol

import (
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/command"
)

func TestParseBasicCommands(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "every command once",
			reply: `[CREATE_FILE path="src/a.py"]
print("hi")

def f():
    return 1
[/CREATE_FILE]
[EDIT_FILE path="src/a.py" start_line="1" end_line="1"]
print("hello")
[/EDIT_FILE]
[DELETE_FILE path="old.txt"]
[READ_FILE path="src/a.py"]
[RUN_COMMAND]
python src/a.py
[/RUN_COMMAND]
[MESSAGE]
Created the script.
[/MESSAGE]
[DONE]
All done.
[/DONE]
`,
			want: []command.Command{
				{Type: command.CreateFile, Path: "src/a.py", Content: "print(\"hi\")\n\ndef f():\n    return 1\n", Line: 1},
				{Type: command.EditFile, Path: "src/a.py", StartLine: 1, EndLine: 1, Content: "print(\"hello\")\n", Line: 7},
				{Type: command.DeleteFile, Path: "old.txt", Line: 10},
				{Type: command.ReadFile, Path: "src/a.py", Line: 11},
				{Type: command.RunCommand, Command: "python src/a.py", Line: 12},
				{Type: command.Message, Text: "Created the script.", Line: 15},
				{Type: command.Done, Text: "All done.", Line: 18},
			},
		},
		{
			name:  "empty body gives empty file",
			reply: "[CREATE_FILE path=\"pkg/__init__.py\"]\n[/CREATE_FILE]\n",
			want:  []command.Command{{Type: command.CreateFile, Path: "pkg/__init__.py", Content: "", Line: 1}},
		},
		{
			name:  "run command options",
			reply: "[RUN_COMMAND cwd=\"web\" timeout=\"90s\"]\nnpm ci\nnpm test\n[/RUN_COMMAND]",
			want:  []command.Command{{Type: command.RunCommand, Command: "npm ci\nnpm test", Dir: "web", Timeout: command.Duration(90 * time.Second), Line: 1}},
		},
		{
			name:  "unclosed create file at end of reply",
			reply: "Here it is:\n\n[CREATE_FILE path=\"src/app.py\"]\nimport os\n",
			want:  []command.Command{perr(3, "src/app.py", "CREATE_FILE for 'src/app.py' (line 3) has no closing [/CREATE_FILE]", "cut off", "resend the whole block")},
		},
		{
			name:  "missing path",
			reply: "[CREATE_FILE]\nx\n[/CREATE_FILE]\n[READ_FILE]\n",
			want:  []command.Command{perr(1, "", "CREATE_FILE (line 1) has no path attribute"), perr(4, "", "READ_FILE (line 4) has no path")},
		},
	})
}
