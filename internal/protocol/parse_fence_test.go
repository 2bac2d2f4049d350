package protocol

import (
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

func TestParseFences(t *testing.T) {
	create := func(line int, path, content string) command.Command {
		return command.Command{Type: command.CreateFile, Path: path, Content: content, Line: line}
	}
	runCases(t, []parseCase{
		{
			name:  "code file body wrapped in a fence is unwrapped",
			reply: "[CREATE_FILE path=\"main.go\"]\n```go\npackage main\n\nfunc main() {}\n```\n[/CREATE_FILE]\n",
			want:  []command.Command{create(1, "main.go", "package main\n\nfunc main() {}\n")},
		},
		{
			name:  "blank lines around the wrapping fence go with it",
			reply: "[CREATE_FILE path=\"a.sh\"]\n\n```sh\necho hi\n```\n\n[/CREATE_FILE]\n",
			want:  []command.Command{create(1, "a.sh", "echo hi\n")},
		},
		{
			name:  "longer tilde fence, closer at least as long",
			reply: "[CREATE_FILE path=\"x.py\"]\n~~~~python\nx = 1\n~~~~~\n[/CREATE_FILE]\n",
			want:  []command.Command{create(1, "x.py", "x = 1\n")},
		},
		{
			name:  "a fence opened but not closed at the end is content",
			reply: "[CREATE_FILE path=\"x.py\"]\n```python\nx = 1\n[/CREATE_FILE]\n",
			want:  []command.Command{create(1, "x.py", "```python\nx = 1\n")},
		},
		{
			name:  "a shorter closer does not close a longer fence",
			reply: "[CREATE_FILE path=\"x.py\"]\n````python\nx = 1\n```\n[/CREATE_FILE]\n",
			want:  []command.Command{create(1, "x.py", "````python\nx = 1\n```\n")},
		},
		{
			name:  "blank lines of an unfenced body are kept",
			reply: "[CREATE_FILE path=\"x.txt\"]\n\nline\n\n[/CREATE_FILE]\n",
			want:  []command.Command{create(1, "x.txt", "\nline\n\n")},
		},
		{
			name: "markdown file wrapped in a markdown fence is unwrapped, inner fences kept",
			reply: "[CREATE_FILE path=\"README.md\"]\n" +
				"```markdown\n" +
				"# Tool\n\n" +
				"Install:\n\n" +
				"```bash\n" +
				"npm i -g tool\n" +
				"```\n\n" +
				"Use it:\n\n" +
				"```\n" +
				"tool run\n" +
				"```\n" +
				"```\n" +
				"[/CREATE_FILE]\n",
			want: []command.Command{create(1, "README.md",
				"# Tool\n\nInstall:\n\n```bash\nnpm i -g tool\n```\n\nUse it:\n\n```\ntool run\n```\n")},
		},
		{
			name: "markdown file wrapped in a longer fence is unwrapped",
			reply: "[CREATE_FILE path=\"docs/guide.md\"]\n" +
				"````md\n" +
				"Run:\n" +
				"```sh\n" +
				"make\n" +
				"```\n" +
				"````\n" +
				"[/CREATE_FILE]\n",
			want: []command.Command{create(1, "docs/guide.md", "Run:\n```sh\nmake\n```\n")},
		},
		{
			name: "markdown file starting and ending with code blocks keeps every line",
			reply: "[CREATE_FILE path=\"README.md\"]\n" +
				"```bash\n" +
				"npm install\n" +
				"```\n" +
				"\n" +
				"Then start the server with:\n" +
				"\n" +
				"```bash\n" +
				"npm start\n" +
				"```\n" +
				"[/CREATE_FILE]\n",
			want: []command.Command{create(1, "README.md",
				"```bash\nnpm install\n```\n\nThen start the server with:\n\n```bash\nnpm start\n```\n")},
		},
		{
			name:  "markdown file that is a single labelled code block keeps it",
			reply: "[CREATE_FILE path=\"snippet.md\"]\n```python\nprint(1)\n```\n[/CREATE_FILE]\n",
			want:  []command.Command{create(1, "snippet.md", "```python\nprint(1)\n```\n")},
		},
		{
			// Extensions compare in any case, as strings.ToLower has it:
			// the Kelvin sign lower-cases to 'k'.
			name:  "a markdown extension in other cases is still markdown",
			reply: "[CREATE_FILE path=\"A.MD\"]\n```python\nprint(1)\n```\n[/CREATE_FILE]\n[CREATE_FILE path=\"b.m\u212Ad\"]\n```python\nprint(1)\n```\n[/CREATE_FILE]\n",
			want: []command.Command{
				create(1, "A.MD", "```python\nprint(1)\n```\n"),
				create(6, "b.m\u212Ad", "```python\nprint(1)\n```\n"),
			},
		},
		{
			name: "markdown file starting and ending with bare fences keeps every line",
			reply: "[CREATE_FILE path=\"USAGE.markdown\"]\n" +
				"```\n" +
				"tool --help\n" +
				"```\n" +
				"Options are listed above.\n" +
				"```\n" +
				"tool --version\n" +
				"```\n" +
				"[/CREATE_FILE]\n",
			want: []command.Command{create(1, "USAGE.markdown",
				"```\ntool --help\n```\nOptions are listed above.\n```\ntool --version\n```\n")},
		},
		{
			name:  "run command body in a fence",
			reply: "[RUN_COMMAND]\n```bash\nset -e\ncd app\nnpm test\n```\n[/RUN_COMMAND]\n",
			want:  []command.Command{{Type: command.RunCommand, Command: "set -e\ncd app\nnpm test", Line: 1}},
		},
		{
			name:  "line-range edit body in a fence",
			reply: "[EDIT_FILE path=\"a.rb\" start_line=\"3\" end_line=\"4\"]\n```ruby\nputs 1\n```\n[/EDIT_FILE]\n",
			want:  []command.Command{{Type: command.EditFile, Path: "a.rb", StartLine: 3, EndLine: 4, Content: "puts 1\n", Line: 1}},
		},
		{
			name:  "message keeps its code fence",
			reply: "[MESSAGE]\nRun this yourself:\n```\nsudo make install\n```\n[/MESSAGE]\n",
			want:  []command.Command{{Type: command.Message, Text: "Run this yourself:\n```\nsudo make install\n```", Line: 1}},
		},
	})
}
