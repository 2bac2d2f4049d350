package protocol

import (
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

func TestParseTagSpelling(t *testing.T) {
	del := func(line int, path string) command.Command {
		return command.Command{Type: command.DeleteFile, Path: path, Line: line}
	}
	read := func(line int, path string, start, end int) command.Command {
		return command.Command{Type: command.ReadFile, Path: path, StartLine: start, EndLine: end, Line: line}
	}
	runCases(t, []parseCase{
		{
			name: "quote styles",
			reply: "[DELETE_FILE path=\"a\"]\n" +
				"[DELETE_FILE path='b']\n" +
				"[DELETE_FILE path=“c d”]\n" +
				"[DELETE_FILE path=”e”]\n" +
				"[DELETE_FILE path=‘f’]\n" +
				"[DELETE_FILE path=„g“]\n" +
				"[DELETE_FILE path=«h»]\n" +
				"[DELETE_FILE path=\"it's.txt\"]\n",
			want: []command.Command{del(1, "a"), del(2, "b"), del(3, "c d"), del(4, "e"), del(5, "f"), del(6, "g"), del(7, "h"), del(8, "it's.txt")},
		},
		{
			name: "unquoted values, spaces around =, any order, any case",
			reply: "[READ_FILE path=src/a.go]\n" +
				"[READ_FILE   PATH = \"src/b.go\"   LINES = \"5-9\" ]\n" +
				"[read_file lines=\"12\" path=\"c.go\"]\n" +
				"[Read_File path=d.go start_line=3 end_line=8]\n" +
				"[READ_FILE path=\"e.go\" start_line=\"40\"]\n" +
				"[READ_FILE path=f.go lines=\"-20\"]\n" +
				"[READ_FILE Start-Line=2 End-Line=2 File=\"g.go\"]\n",
			want: []command.Command{
				read(1, "src/a.go", 0, 0), read(2, "src/b.go", 5, 9), read(3, "c.go", 12, 12),
				read(4, "d.go", 3, 8), read(5, "e.go", 40, 0), read(6, "f.go", 1, 20), read(7, "g.go", 2, 2),
			},
		},
		{
			name: "self-closing slash and needless closing tags",
			reply: "[DELETE_FILE path=\"x\" /]\n" +
				"[READ_FILE path=\"y\"/]\n" +
				"[READ_FILE path=\"z\"]\n" +
				"\n" +
				"[/READ_FILE]\n" +
				"[DELETE_FILE path=\"w\"][/DELETE_FILE]\n" +
				"[READ_FILE path=src/*.go/]\n",
			want: []command.Command{del(1, "x"), read(2, "y", 0, 0), read(3, "z", 0, 0), del(6, "w"), read(7, "src/*.go", 0, 0)},
		},
		{
			name: "glob and bracket characters in paths are kept as written",
			reply: "[READ_FILE path=\"src/**/*_test.go\"]\n" +
				"[CREATE_FILE path=\"app/[id]/page.tsx\"]\nexport default function Page() {}\n[/CREATE_FILE]\n" +
				"[DELETE_FILE path=\"../outside.txt\"]\n",
			want: []command.Command{
				read(1, "src/**/*_test.go", 0, 0),
				{Type: command.CreateFile, Path: "app/[id]/page.tsx", Content: "export default function Page() {}\n", Line: 2},
				del(5, "../outside.txt"),
			},
		},
		{
			name: "invisible characters and no-break spaces around tags",
			reply: "\u200b[CREATE_FILE\u00a0path=\"a.txt\"]\u200d\n" +
				"keep\u200bthis\u00a0text\n" +
				"\ufeff[/CREATE_FILE]\u2060\n" +
				"\u00a0\u00a0[RUN_COMMAND]\n" +
				"ls\n" +
				"[/RUN_COMMAND]\u200c\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "a.txt", Content: "keep\u200bthis\u00a0text\n", Line: 1},
				{Type: command.RunCommand, Command: "ls", Line: 4},
			},
		},
		{
			name: "create without overwrite",
			reply: "[CREATE_FILE path=\"a\" overwrite=\"false\"]\n1\n[/CREATE_FILE]\n" +
				"[CREATE_FILE path=\"b\" no_overwrite=\"true\"]\n2\n[/CREATE_FILE]\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "a", Content: "1\n", NoOverwrite: true, Line: 1},
				{Type: command.CreateFile, Path: "b", Content: "2\n", NoOverwrite: true, Line: 4},
			},
		},
		{
			name: "run command timeouts",
			reply: "[RUN_COMMAND timeout=\"2m\"]\na\n[/RUN_COMMAND]\n" +
				"[RUN_COMMAND timeout=45 cwd=sub/dir]\nb\n[/RUN_COMMAND]\n",
			want: []command.Command{
				{Type: command.RunCommand, Command: "a", Timeout: 120e9, Line: 1},
				{Type: command.RunCommand, Command: "b", Timeout: 45e9, Dir: "sub/dir", Line: 4},
			},
		},
		{
			name:  "closing tag with blanks and other case",
			reply: "[MESSAGE]\nhi\n  [/message ]  \n",
			want:  []command.Command{{Type: command.Message, Text: "hi", Line: 1}},
		},
		{
			name:  "crlf line endings",
			reply: "Session: 12345678\r\n[CREATE_FILE path=\"w.bat\"]\r\n@echo off\r\necho hi\r\n[/CREATE_FILE]\r\n[DONE]\r\nok\r\n[/DONE]\r\n",
			want: []command.Command{
				{Type: command.CreateFile, Path: "w.bat", Content: "@echo off\necho hi\n", Line: 2},
				{Type: command.Done, Text: "ok", Line: 6},
			},
		},
	})
}

func TestParseIndentation(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "four-space indented block keeps the code's own indentation",
			reply: "Here:\n\n" +
				"    [CREATE_FILE path=\"a.py\"]\n" +
				"    def f():\n" +
				"        return 1\n" +
				"    [/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "a.py", Content: "def f():\n    return 1\n", Line: 3}},
		},
		{
			name: "lines with less indentation keep what they have left",
			reply: "1. [CREATE_FILE path=\"t.txt\"]\n" +
				"   one\n" +
				" two\n" +
				"three\n" +
				"      four\n" +
				"   [/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "t.txt", Content: "one\ntwo\nthree\n   four\n", Line: 1}},
		},
		{
			name:  "tab-indented block",
			reply: "\t[RUN_COMMAND]\n\tmake\n\t\tmake install\n\t[/RUN_COMMAND]\n",
			want:  []command.Command{{Type: command.RunCommand, Command: "make\n\tmake install", Line: 1}},
		},
		{
			name: "indented search/replace pairs",
			reply: "- [EDIT_FILE path=\"m.go\"]\n" +
				"  <<<<<<< SEARCH\n" +
				"  \tx := 1\n" +
				"  =======\n" +
				"  \tx := 2\n" +
				"  >>>>>>> REPLACE\n" +
				"  [/EDIT_FILE]\n",
			want: []command.Command{{Type: command.EditFile, Path: "m.go", Line: 1,
				Edits: []command.Edit{{Search: "\tx := 1\n", Replace: "\tx := 2\n"}}}},
		},
		{
			name:  "message text indented in a list",
			reply: "- [MESSAGE]\n  Line one.\n    Indented.\n  [/MESSAGE]\n",
			want:  []command.Command{{Type: command.Message, Text: "Line one.\n  Indented.", Line: 1}},
		},
	})
}

func TestParseTagOddities(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "backticks and colons that LLMs add",
			reply: "[DELETE_FILE path=\"`old/a.js`\"]\n" +
				"[DELETE_FILE path=`b.js`]\n" +
				"[READ_FILE: path=\"c.js\"]\n" +
				"[READ_FILE path: \"d.js\", lines: \"3-4\"]\n",
			want: []command.Command{
				{Type: command.DeleteFile, Path: "old/a.js", Line: 1},
				{Type: command.DeleteFile, Path: "b.js", Line: 2},
				{Type: command.ReadFile, Path: "c.js", Line: 3},
				{Type: command.ReadFile, Path: "d.js", StartLine: 3, EndLine: 4, Line: 4},
			},
		},
		{
			name:  "text file with two code blocks keeps its fences",
			reply: "[CREATE_FILE path=\"notes.txt\"]\n```\nmake\n```\nthen\n```\nmake install\n```\n[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "notes.txt", Line: 1,
				Content: "```\nmake\n```\nthen\n```\nmake install\n```\n"}},
		},
		{
			name:  "code file wrapped in a labelled fence with fenced examples in a docstring",
			reply: "[CREATE_FILE path=\"doc.py\"]\n```python\ndef f():\n    \"\"\"\n    ```\n    f()\n    ```\n    \"\"\"\n```\n[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "doc.py", Line: 1,
				Content: "def f():\n    \"\"\"\n    ```\n    f()\n    ```\n    \"\"\"\n"}},
		},
	})
}

// An unknown tag followed by list lines (which look like tags at first
// sight) is still reported: what the parser read of the tag survives the
// scan for its closing tag.
func TestUnknownTagBeforeListLines(t *testing.T) {
	r := Parse("[NOTE]\n[WRITE_FILE path=\"a.go\"]\n- one\n- two\n- three\n1. four\n[/WRITE_FILE]\n")
	if len(r.Commands) != 1 || r.Commands[0].Type != command.ParseError ||
		!strings.Contains(r.Commands[0].Error, "[WRITE_FILE] at line 2 is not a courier command, so its block (lines 2-7) was ignored. Did you mean [CREATE_FILE]?") {
		t.Fatalf("got %s", dump(r.Commands))
	}
}

func TestTagWithInvalidByte(t *testing.T) {
	r := Parse("[DELEtE_FILE pAth=\x99")
	if len(r.Commands) != 1 || r.Commands[0].Path != "\uFFFD" || !strings.Contains(r.Commands[0].Error, "DELETE_FILE for \"\uFFFD\" (line 1) the tag has no closing ']'") {
		t.Fatalf("got %s", dump(r.Commands))
	}
}
