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
			name: "whole reply in a fence, final DONE without closing tag",
			reply: "```\n" +
				"[RUN_COMMAND]\nmake test\n[/RUN_COMMAND]\n" +
				"[DONE]\nTests pass. Example:\n```sh\nmake test\n```\n" +
				"```\n",
			want: []command.Command{
				{Type: command.RunCommand, Command: "make test", Line: 2},
				{Type: command.Done, Text: "Tests pass. Example:\n```sh\nmake test\n```", Line: 5},
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
			name: "tags mentioned in sentences are not commands, but a reply of nothing else is told so",
			reply: "I will use [READ_FILE path=\"a.go\"] next time, and a [DONE] block at the end.\n" +
				"Remember: the `[RUN_COMMAND]` tag runs shell commands.\n" +
				"See [the docs](https://example.com) and [1].\n" +
				"- [x] tests written\n" +
				"- [ ] docs\n" +
				"[NOTE]\n" +
				"[x]\n" +
				"[1]: https://example.com/ref\n",
			want: []command.Command{perr(1, "", `line 1 holds the tag '[READ_FILE path="a.go"]' where none counts`,
				"alone at the start of its own line", "Nothing was done")},
		},
	})
}

// More replies in the styles of particular models.
func TestParseRealisticRepliesMore(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "claude: each block in a fence labelled with the file's language",
			reply: "Session: c0ffee00\nSequence: 5\n\nHere's the fix:\n\n" +
				"```python\n" +
				"[CREATE_FILE path=\"calc.py\"]\n" +
				"def add(a, b):\n" +
				"    return a + b\n" +
				"[/CREATE_FILE]\n" +
				"```\n\n" +
				"```bash\n" +
				"[RUN_COMMAND]\n" +
				"python -c 'import calc; print(calc.add(2, 3))'\n" +
				"[/RUN_COMMAND]\n" +
				"```\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "calc.py", Content: "def add(a, b):\n    return a + b\n", Line: 7},
				{Type: command.RunCommand, Command: "python -c 'import calc; print(calc.add(2, 3))'", Line: 14},
			},
		},
		{
			name: "qwen-style local model: think, then terse blocks and a final DONE",
			reply: "<think>\nOkay, so the user wants me to add a .gitignore. I'll write [CREATE_FILE path=\".gitignore\"] with node_modules.\n</think>\n\n" +
				"[CREATE_FILE path=\".gitignore\"]\nnode_modules/\ndist/\n[/CREATE_FILE]\n" +
				"[RUN_COMMAND]git status --short[/RUN_COMMAND]\n" +
				"[DONE]\nAdded .gitignore for node_modules and dist.\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: ".gitignore", Content: "node_modules/\ndist/\n", Line: 5},
				{Type: command.RunCommand, Command: "git status --short", Line: 9},
				{Type: command.Done, Text: "Added .gitignore for node_modules and dist.", Line: 10},
			},
		},
		{
			name: "gemini: bold step headings, blank lines between pairs, message at the end",
			reply: "**Step 1: Fix the import**\n\n" +
				"[EDIT_FILE path=\"src/index.ts\"]\n" +
				"\n" +
				"<<<<<<< SEARCH\n" +
				"import { foo } from './foo'\n" +
				"=======\n" +
				"import { foo } from './foo.js'\n" +
				">>>>>>> REPLACE\n" +
				"\n\n" +
				"<<<<<<< SEARCH\n" +
				"foo()\n" +
				"=======\n" +
				"await foo()\n" +
				">>>>>>> REPLACE\n" +
				"\n" +
				"[/EDIT_FILE]\n\n" +
				"**Step 2: Explain**\n\n" +
				"[MESSAGE]\n\nThe import needed a .js extension under NodeNext resolution.\n\n[/MESSAGE]\n",
			want: []command.Command{
				{Type: command.EditFile, Path: "src/index.ts", Line: 3, Edits: []command.Edit{
					{Search: "import { foo } from './foo'\n", Replace: "import { foo } from './foo.js'\n"},
					{Search: "foo()\n", Replace: "await foo()\n"},
				}},
				{Type: command.Message, Text: "The import needed a .js extension under NodeNext resolution.", Line: 22},
			},
		},
		{
			name: "chatgpt: README with code blocks and no wrapper",
			reply: "Here's an updated README:\n\n" +
				"[CREATE_FILE path=\"README.md\"]\n" +
				"# calc\n\n" +
				"```bash\npip install calc\n```\n\n" +
				"Usage:\n\n" +
				"```python\nimport calc\n```\n" +
				"[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "README.md", Line: 3,
				Content: "# calc\n\n```bash\npip install calc\n```\n\nUsage:\n\n```python\nimport calc\n```\n"}},
		},
		{
			name: "reply cut off by the length limit in the middle of an edit",
			reply: "[CREATE_FILE path=\"a.go\"]\npackage a\n[/CREATE_FILE]\n" +
				"[EDIT_FILE path=\"b.go\"]\n<<<<<<< SEARCH\nfunc B() {\n=======\nfunc B() error {\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "a.go", Content: "package a\n", Line: 1},
				perr(4, "b.go", "EDIT_FILE for 'b.go' (line 4) has no closing [/EDIT_FILE]", "looks cut off", "The file was not changed"),
			},
		},
	})
}
