package protocol

import (
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

// The notes a command carries when a chat page's lines were left out.
const (
	pageNote  = "courier left out the chat page's "
	fromPage  = " (the reply was copied from the rendered page)"
	bashFirst = "courier left out its first line 'bash' (a shell started with no input does nothing)"
)

// Bodies copied from a rendered chat page: the page's lines at a body's
// edges are left out only when they cannot be content, and every one of
// them both ways, so that nothing real is lost.
func TestParseChrome(t *testing.T) {
	runCases(t, []parseCase{
		{
			name:  "a label and the copy button over a file",
			reply: "[CREATE_FILE path=\"a.py\"]\npython\nCopy code\nprint(1)\n[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "a.py", Content: "print(1)\n", Line: 1,
				Note: pageNote + "'python', 'Copy code' before the code" + fromPage}},
		},
		{
			name:  "the button's label pairs with any label, whatever the file",
			reply: "[CREATE_FILE path=\"steps.txt\"]\ngo\nCopy code\nbuild it\n[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "steps.txt", Content: "build it\n", Line: 1,
				Note: pageNote + "'go', 'Copy code' before the code" + fromPage}},
		},
		{
			name:  "a file that really starts with the word go keeps it",
			reply: "[CREATE_FILE path=\"steps.txt\"]\ngo\nbuild it\n[/CREATE_FILE]\n",
			want:  []command.Command{{Type: command.CreateFile, Path: "steps.txt", Content: "go\nbuild it\n", Line: 1}},
		},
		{
			name:  "a label alone over code in its language is the page's",
			reply: "[CREATE_FILE path=\"main.go\"]\ngo\n\npackage main\n[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "main.go", Content: "package main\n", Line: 1,
				Note: pageNote + "'go' before the code" + fromPage}},
		},
		{
			name:  "a Markdown file's first word is content, its setext heading intact",
			reply: "[CREATE_FILE path=\"README.md\"]\nMarkdown\n========\n[/CREATE_FILE]\n",
			want:  []command.Command{{Type: command.CreateFile, Path: "README.md", Content: "Markdown\n========\n", Line: 1}},
		},
		{
			name:  "a bash script under the page's header loses the header",
			reply: "[CREATE_FILE path=\"run.sh\"]\nbash\nCopy\nEdit\n#!/bin/bash\nbash -c 'echo hi'\n[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "run.sh", Content: "#!/bin/bash\nbash -c 'echo hi'\n", Line: 1,
				Note: pageNote + "'bash', 'Copy', 'Edit' before the code" + fromPage}},
		},
		{
			name:  "a real bash script keeps every line",
			reply: "[CREATE_FILE path=\"run.sh\"]\n#!/bin/bash\nbash\n[/CREATE_FILE]\n[CREATE_FILE path=\"shells.txt\"]\nbash\nzsh\n[/CREATE_FILE]\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "run.sh", Content: "#!/bin/bash\nbash\n", Line: 1},
				{Type: command.CreateFile, Path: "shells.txt", Content: "bash\nzsh\n", Line: 5},
			},
		},
		{
			name:  "a shell's name over a command is left out, alone it is the command",
			reply: "[RUN_COMMAND]\nbash\npytest -q\n[/RUN_COMMAND]\n[RUN_COMMAND]\nbash\n[/RUN_COMMAND]\n[RUN_COMMAND]\nbash -c 'ls'\n[/RUN_COMMAND]\n",
			want: []command.Command{
				{Type: command.RunCommand, Command: "pytest -q", Line: 1, Note: bashFirst},
				{Type: command.RunCommand, Command: "bash", Line: 5},
				{Type: command.RunCommand, Command: "bash -c 'ls'", Line: 8},
			},
		},
		{
			name:  "a button's label alone, without its language or its fellow, is content",
			reply: "[CREATE_FILE path=\"notes.txt\"]\nCopy\nthe files first.\n[/CREATE_FILE]\n",
			want:  []command.Command{{Type: command.CreateFile, Path: "notes.txt", Content: "Copy\nthe files first.\n", Line: 1}},
		},
		{
			name:  "nothing but chrome is content after all",
			reply: "[CREATE_FILE path=\"notes.txt\"]\nCopy code\n[/CREATE_FILE]\n",
			want:  []command.Command{{Type: command.CreateFile, Path: "notes.txt", Content: "Copy code\n", Line: 1}},
		},
		{
			name: "footers: Gemini, joined, AI Studio, Bard",
			reply: "[RUN_COMMAND]\nls\nUse code with caution.\nBash\n[/RUN_COMMAND]\n" +
				"[RUN_COMMAND]\npwd\n\nUse code with caution.Bash\n[/RUN_COMMAND]\n" +
				"[CREATE_FILE path=\"x.txt\"]\nGenerated sh\nhi\nIGNORE_WHEN_COPYING_START\ncontent_copy\ndownload\nUse code with caution.\nSh\nIGNORE_WHEN_COPYING_END\n[/CREATE_FILE]\n" +
				"[CREATE_FILE path=\"y.txt\"]\nC#\nhi\nUse code with caution. Learn more\n[/CREATE_FILE]\n",
			want: []command.Command{
				{Type: command.RunCommand, Command: "ls", Line: 1, Note: pageNote + "'Use code with caution.', 'Bash' after the code" + fromPage},
				{Type: command.RunCommand, Command: "pwd", Line: 6, Note: pageNote + "'Use code with caution.Bash' after the code" + fromPage},
				{Type: command.CreateFile, Path: "x.txt", Content: "hi\n", Line: 11, Note: pageNote + "'Generated sh' before the code and " +
					"'IGNORE_WHEN_COPYING_START', 'content_copy', 'download', 'Use code with caution.', 'Sh', 'IGNORE_WHEN_COPYING_END' after the code" + fromPage},
				{Type: command.CreateFile, Path: "y.txt", Content: "hi\n", Line: 21,
					Note: pageNote + "'C#' before the code and 'Use code with caution. Learn more' after the code" + fromPage},
			},
		},
		{
			name:  "a label over Gemini's footer is content: its page puts the label under",
			reply: "[CREATE_FILE path=\"notes.txt\"]\ngo\nhome\nUse code with caution.\n[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "notes.txt", Content: "go\nhome\n", Line: 1,
				Note: pageNote + "'Use code with caution.' after the code" + fromPage}},
		},
		{
			name:  "a header joined to the first line of code, the block's own label",
			reply: "[CREATE_FILE path=\"a.py\"]\npythonCopyimport os\nprint(os.sep)\n[/CREATE_FILE]\n[CREATE_FILE path=\"b.txt\"]\nsetCopyMode\n[/CREATE_FILE]\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "a.py", Content: "import os\nprint(os.sep)\n", Line: 1,
					Note: pageNote + "'pythonCopy' before the code" + fromPage},
				{Type: command.CreateFile, Path: "b.txt", Content: "setCopyMode\n", Line: 5},
			},
		},
		{
			name:  "the page's lines around search/replace pairs and a fence",
			reply: "[EDIT_FILE path=\"a.py\"]\npython\n\nCopy code\n\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n[/EDIT_FILE]\n",
			want: []command.Command{{Type: command.EditFile, Path: "a.py", Line: 1, Edits: []command.Edit{{Search: "x = 1\n", Replace: "x = 2\n"}},
				Note: pageNote + "'python', 'Copy code' before the code" + fromPage}},
		},
		{
			name: "an artifact's card in place of the code is refused, a mention of one is content",
			reply: "[CREATE_FILE path=\"calc.py\"]\nCalculator\nClick to open code\n[/CREATE_FILE]\n" +
				"[CREATE_FILE path=\"b.txt\"]\nTitle\nMore\nClick to open code\n[/CREATE_FILE]\n",
			want: []command.Command{
				perr(1, "calc.py", "CREATE_FILE for 'calc.py' (line 1) holds only the chat page's card for code shown apart ('Click to open code')",
					"Nothing was written"),
				{Type: command.CreateFile, Path: "b.txt", Content: "Title\nMore\nClick to open code\n", Line: 5},
			},
		},
		{
			name:  "chrome outside a fence that stayed",
			reply: "[CREATE_FILE path=\"a.py\"]\npython\n\n```\nprint(1)\n```\n\nUse code with caution.\n[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "a.py", Content: "print(1)\n", Line: 1,
				Note: pageNote + "'python' before the code and 'Use code with caution.' after the code" + fromPage}},
		},
	})
}

// Tags copied as Markdown with its escapes are read as tags, and the
// command says so; what follows a tag on its line is not unescaped.
func TestParseEscapedTags(t *testing.T) {
	runCases(t, []parseCase{
		{
			name:  "escaped tag, attribute and closer",
			reply: "\\[CREATE\\_FILE path=\"a\\_b.py\"\\]\nprint(1)\n\\[/CREATE\\_FILE\\]\n\\[READ\\_FILE path=\"a\\_b.py\"\\]\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "a_b.py", Content: "print(1)\n", Line: 1, Note: escapedNote},
				{Type: command.ReadFile, Path: "a_b.py", Line: 4, Note: escapedNote},
			},
		},
		{
			name:  "only the name escaped, in a list",
			reply: "1. [RUN\\_COMMAND]\n   ls\n   [/RUN\\_COMMAND]\n",
			want:  []command.Command{{Type: command.RunCommand, Command: "ls", Line: 1, Note: escapedNote}},
		},
		{
			name:  "a one-line block's body keeps its backslashes",
			reply: "[RUN_COMMAND]grep -E 'a\\|b' f[/RUN_COMMAND]\n",
			want:  []command.Command{{Type: command.RunCommand, Command: "grep -E 'a\\|b' f", Line: 1}},
		},
		{
			name:  "an escaped closer ends a file body",
			reply: "[CREATE_FILE path=\"a.md\"]\n# A\n\\[/CREATE\\_FILE\\]\n[DONE]\nok\n[/DONE]\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "a.md", Content: "# A\n", Line: 1},
				{Type: command.Done, Text: "ok", Line: 4},
			},
		},
	})
}

// A reply whose tags could not be read at all is told so, rather than
// given a turn of nothing.
func TestParseMangledTags(t *testing.T) {
	runCases(t, []parseCase{
		{
			name:  "a block joined into a sentence",
			reply: "Sure. [CREATE_FILE path=\"a.py\"] print(1) [/CREATE_FILE] done\n",
			want: []command.Command{perr(1, "", `line 1 holds the tag '[CREATE_FILE path="a.py"]' where none counts`,
				"without Markdown escapes", "copied from the rendered chat page", "Nothing was done")},
		},
		{
			name:  "escaped twice",
			reply: "Here:\n\n\\\\[RUN\\\\_COMMAND\\\\]\nls\n\\\\[/RUN\\\\_COMMAND\\\\]\n",
			want:  []command.Command{perr(1, "", `line 3 holds the tag '\\[RUN\\_COMMAND\\]'`)},
		},
		{
			name:  "a link named like a command is no tag",
			reply: "See [DONE](https://example.com) and [RUN](x).\n",
			want:  nil,
		},
		{
			name:  "a mention beside a command is left alone",
			reply: "I use [RUN_COMMAND] below.\n[RUN_COMMAND]\nls\n[/RUN_COMMAND]\n",
			want:  []command.Command{{Type: command.RunCommand, Command: "ls", Line: 2}},
		},
	})
}
