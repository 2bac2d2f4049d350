package protocol

import (
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

// Replies written the way chat LLMs actually answer.
func TestParseRealisticReplies(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "chatgpt: headings, bold, each block in its own fence",
			reply: "Session: 0f3c9a1b\nSequence: 2\n\n" +
				"Great — let's fix the failing test. Here's what I'll do:\n\n" +
				"### 1. Update the calculator\n\n" +
				"```text\n" +
				"[EDIT_FILE path=\"src/calc.py\"]\n" +
				"<<<<<<< SEARCH\n" +
				"def add(a, b):\n" +
				"    return a - b\n" +
				"=======\n" +
				"def add(a, b):\n" +
				"    return a + b\n" +
				">>>>>>> REPLACE\n" +
				"[/EDIT_FILE]\n" +
				"```\n\n" +
				"### 2. Run the tests\n\n" +
				"```plaintext\n" +
				"[RUN_COMMAND]\n" +
				"python -m pytest -q\n" +
				"[/RUN_COMMAND]\n" +
				"```\n\n" +
				"**Why this works:** the [EDIT_FILE] above swaps `-` for `+`, and [RUN_COMMAND] checks it.\n",
			want: []command.Command{
				{Type: command.EditFile, Path: "src/calc.py", Line: 9, Edits: []command.Edit{{
					Search:  "def add(a, b):\n    return a - b\n",
					Replace: "def add(a, b):\n    return a + b\n",
				}}},
				{Type: command.RunCommand, Command: "python -m pytest -q", Line: 23},
			},
		},
		{
			name: "claude: prose between blocks, code fence inside the body",
			reply: "I'll create the module and a test for it.\n\n" +
				"[CREATE_FILE path=\"src/greet.js\"]\n" +
				"```javascript\n" +
				"export function greet(name) {\n" +
				"  return `Hello, ${name}!`;\n" +
				"}\n" +
				"```\n" +
				"[/CREATE_FILE]\n\n" +
				"Now the test:\n\n" +
				"[CREATE_FILE path=\"test/greet.test.js\"]\n" +
				"import { greet } from '../src/greet.js';\n" +
				"test('greets', () => expect(greet('Ada')).toBe('Hello, Ada!'));\n" +
				"[/CREATE_FILE]\n\n" +
				"[RUN_COMMAND timeout=\"120\"]\n" +
				"```bash\n" +
				"npm test -- --runInBand\n" +
				"```\n" +
				"[/RUN_COMMAND]\n\n" +
				"Let me know if you'd like more tests.\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "src/greet.js", Line: 3,
					Content: "export function greet(name) {\n  return `Hello, ${name}!`;\n}\n"},
				{Type: command.CreateFile, Path: "test/greet.test.js", Line: 13,
					Content: "import { greet } from '../src/greet.js';\ntest('greets', () => expect(greet('Ada')).toBe('Hello, Ada!'));\n"},
				{Type: command.RunCommand, Command: "npm test -- --runInBand", Timeout: 120e9, Line: 18},
			},
		},
		{
			name: "gemini: bold header echo, numbered list with indented blocks",
			reply: "**Session:** 9D8E7F60\n**Sequence:** 4\n\n" +
				"Okay, here is the plan:\n\n" +
				"1. Create the config file:\n" +
				"   [CREATE_FILE path=\"config.yaml\"]\n" +
				"   server:\n" +
				"     port: 8080\n" +
				"   [/CREATE_FILE]\n" +
				"2. Check it parses:\n" +
				"    [RUN_COMMAND]\n" +
				"    python -c \"import yaml; print(yaml.safe_load(open('config.yaml')))\"\n" +
				"    [/RUN_COMMAND]\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "config.yaml", Content: "server:\n  port: 8080\n", Line: 7},
				{Type: command.RunCommand, Command: "python -c \"import yaml; print(yaml.safe_load(open('config.yaml')))\"", Line: 12},
			},
		},
		{
			name: "list marker on the tag line",
			reply: "Steps:\n" +
				"- [DELETE_FILE path=\"build/old.js\"]\n" +
				"1. [RUN_COMMAND]\n" +
				"   make build\n" +
				"   [/RUN_COMMAND]\n" +
				"* [READ_FILE path=\"Makefile\"]\n",
			want: []command.Command{
				{Type: command.DeleteFile, Path: "build/old.js", Line: 2},
				{Type: command.RunCommand, Command: "make build", Line: 3},
				{Type: command.ReadFile, Path: "Makefile", Line: 6},
			},
		},
		{
			name: "whole reply wrapped in one fence",
			reply: "```\n" +
				"Session: abcdef01\n" +
				"Sequence: 7\n" +
				"[CREATE_FILE path=\"hello.txt\"]\n" +
				"hello\n" +
				"[/CREATE_FILE]\n" +
				"[DONE]\n" +
				"Wrote hello.txt.\n" +
				"[/DONE]\n" +
				"```\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "hello.txt", Content: "hello\n", Line: 4},
				{Type: command.Done, Text: "Wrote hello.txt.", Line: 7},
			},
		},
		{
			name: "whole reply wrapped in a tilde fence with a language",
			reply: "~~~~text\n" +
				"[RUN_COMMAND]\n" +
				"go test ./...\n" +
				"[/RUN_COMMAND]\n" +
				"~~~~\n",
			want: []command.Command{{Type: command.RunCommand, Command: "go test ./...", Line: 2}},
		},
		{
			name: "local model: think section with draft commands, then the answer",
			reply: "<think>\n" +
				"The user wants a hello world. Maybe:\n" +
				"[CREATE_FILE path=\"draft.c\"]\n" +
				"int main(){}\n" +
				"[/CREATE_FILE]\n" +
				"No, better with printf.\n" +
				"</think>\n\n" +
				"[CREATE_FILE path=\"hello.c\"]\n" +
				"#include <stdio.h>\n" +
				"int main(void) { puts(\"hi\"); return 0; }\n" +
				"[/CREATE_FILE]\n" +
				"[RUN_COMMAND]\n" +
				"cc hello.c -o hello && ./hello\n" +
				"[/RUN_COMMAND]\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "hello.c", Content: "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n", Line: 9},
				{Type: command.RunCommand, Command: "cc hello.c -o hello && ./hello", Line: 13},
			},
		},
		{
			name: "local model: lower-case tags, single quotes, final DONE without closing tag",
			reply: "[create_file path='notes/todo.md']\n" +
				"- write tests\n" +
				"[/create_file]\n" +
				"[Done]\n" +
				"Created the todo list.\n\n" +
				"Tell me what to do next!\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "notes/todo.md", Content: "- write tests\n", Line: 1},
				{Type: command.Done, Text: "Created the todo list.\n\nTell me what to do next!", Line: 4},
			},
		},
		{
			name: "one-line blocks and DONE with text on the tag line",
			reply: "[MESSAGE]Building now.[/MESSAGE]\n" +
				"[RUN_COMMAND]cargo build[/RUN_COMMAND]\n" +
				"[DONE] The project builds cleanly.\n",
			want: []command.Command{
				{Type: command.Message, Text: "Building now.", Line: 1},
				{Type: command.RunCommand, Command: "cargo build", Line: 2},
				{Type: command.Done, Text: "The project builds cleanly.", Line: 3},
			},
		},
		{
			name: "tags mentioned in sentences are not commands",
			reply: "I will use [READ_FILE path=\"a.go\"] next time, and a [DONE] block at the end.\n" +
				"Remember: the `[RUN_COMMAND]` tag runs shell commands.\n" +
				"See [the docs](https://example.com) and [1].\n" +
				"- [x] tests written\n" +
				"- [ ] docs\n" +
				"[NOTE]\n" +
				"[x]\n" +
				"[1]: https://example.com/ref\n",
			want: nil,
		},
	})
}
