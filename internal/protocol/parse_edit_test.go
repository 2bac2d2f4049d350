package protocol

import (
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

func TestParseSearchReplace(t *testing.T) {
	edit := func(line int, path string, pairs ...string) command.Command {
		c := command.Command{Type: command.EditFile, Path: path, Line: line}
		for i := 0; i+1 < len(pairs); i += 2 {
			c.Edits = append(c.Edits, command.Edit{Search: pairs[i], Replace: pairs[i+1]})
		}
		return c
	}
	runCases(t, []parseCase{
		{
			name: "several pairs, marker variations",
			reply: "[EDIT_FILE path=\"app.py\"]\n" +
				"<<<<<<< SEARCH\n" +
				"import os\n" +
				"=======\n" +
				"import os\n" +
				"import sys\n" +
				">>>>>>> REPLACE\n" +
				"\n" +
				"  <<<<< search  \n" +
				"DEBUG = True\n" +
				"=========\n" +
				"DEBUG = False\n" +
				"  >>>>>>>>> Replace\n" +
				"[/EDIT_FILE]\n",
			want: []command.Command{edit(1, "app.py",
				"import os\n", "import os\nimport sys\n",
				"DEBUG = True\n", "DEBUG = False\n")},
		},
		{
			name:  "empty replacement deletes the lines",
			reply: "[EDIT_FILE path=\"a.txt\"]\n<<<<<<< SEARCH\nremove me\n=======\n>>>>>>> REPLACE\n[/EDIT_FILE]\n",
			want:  []command.Command{edit(1, "a.txt", "remove me\n", "")},
		},
		{
			name: "each pair in its own fence, and fenced sections",
			reply: "[EDIT_FILE path=\"main.go\"]\n" +
				"```go\n" +
				"<<<<<<< SEARCH\n" +
				"x := 1\n" +
				"=======\n" +
				"x := 2\n" +
				">>>>>>> REPLACE\n" +
				"```\n" +
				"```\n" +
				"<<<<<<< SEARCH\n" +
				"```go\n" +
				"y := 1\n" +
				"```\n" +
				"=======\n" +
				"```go\n" +
				"y := 2\n" +
				"```\n" +
				">>>>>>> REPLACE\n" +
				"```\n" +
				"[/EDIT_FILE]\n",
			want: []command.Command{edit(1, "main.go", "x := 1\n", "x := 2\n", "y := 1\n", "y := 2\n")},
		},
		{
			name: "markdown sections keep their fences",
			reply: "[EDIT_FILE path=\"README.md\"]\n" +
				"<<<<<<< SEARCH\n" +
				"```bash\n" +
				"make\n" +
				"```\n" +
				"=======\n" +
				"```bash\n" +
				"make all\n" +
				"```\n" +
				">>>>>>> REPLACE\n" +
				"[/EDIT_FILE]\n",
			want: []command.Command{edit(1, "README.md", "```bash\nmake\n```\n", "```bash\nmake all\n```\n")},
		},
		{
			name: "broken pairs are reported with their line",
			reply: "[EDIT_FILE path=\"a\"]\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n[/EDIT_FILE]\n" +
				"[EDIT_FILE path=\"b\"]\n<<<<<<< SEARCH\nx\n=======\ny\n[/EDIT_FILE]\n" +
				"[EDIT_FILE path=\"c\"]\n<<<<<<< SEARCH\nTitle\n=======\nx\n=======\ny\n>>>>>>> REPLACE\n[/EDIT_FILE]\n" +
				"[EDIT_FILE path=\"d\"]\nFix the typo:\n<<<<<<< SEARCH\nteh\n=======\nthe\n>>>>>>> REPLACE\n[/EDIT_FILE]\n" +
				"[EDIT_FILE path=\"e\"]\n<<<<<<< SEARCH\n\n=======\nnew\n>>>>>>> REPLACE\n[/EDIT_FILE]\n" +
				"[EDIT_FILE path=\"f\"]\n=======\n>>>>>>> REPLACE\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n[/EDIT_FILE]\n" +
				"[EDIT_FILE path=\"g\" start_line=\"1\" end_line=\"2\"]\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n[/EDIT_FILE]\n",
			want: []command.Command{
				perr(1, "a", "EDIT_FILE for 'a' (line 1) has a SEARCH/REPLACE pair at line 2 without its ======= line"),
				perr(6, "b", "pair at line 7 without its closing >>>>>>> REPLACE line"),
				perr(12, "c", "pair at line 13 with more than one ======= line", "use start_line/end_line"),
				perr(21, "d", "has text outside any SEARCH/REPLACE pair at line 22"),
				perr(29, "e", "pair at line 30 whose SEARCH part is empty"),
				perr(36, "f", "has a marker at line 37 outside any pair"),
				perr(45, "g", "has start_line/end_line and also SEARCH/REPLACE markers"),
			},
		},
		{
			name:  "line-range edit with an empty body deletes the lines",
			reply: "[EDIT_FILE path=\"x.js\" start_line=\"10\" end_line=\"12\"]\n[/EDIT_FILE]\n",
			want:  []command.Command{{Type: command.EditFile, Path: "x.js", StartLine: 10, EndLine: 12, Content: "", Line: 1}},
		},
	})
}
