package protocol

import (
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

func TestParseUnclosedBlocks(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "reply cut off inside a file",
			reply: "Sure, here's the app.\n\n" +
				"[CREATE_FILE path=\"src/util.py\"]\ndef f():\n    pass\n[/CREATE_FILE]\n\n" +
				"[CREATE_FILE path=\"src/app.py\"]\n" +
				"import os\n" +
				"def main():\n" +
				"    print(os.getcwd(",
			want: []command.Command{
				{Type: command.CreateFile, Path: "src/util.py", Content: "def f():\n    pass\n", Line: 3},
				perr(8, "src/app.py", "CREATE_FILE for 'src/app.py' (line 8) has no closing [/CREATE_FILE]",
					"looks cut off", "Nothing was written to that file", "resend the whole block"),
			},
		},
		{
			name: "forgotten closing tag ended by the next block of the same command",
			reply: "[CREATE_FILE path=\"a.py\"]\n" +
				"A = 1\n" +
				"[CREATE_FILE path=\"b.py\"]\n" +
				"B = 2\n" +
				"[/CREATE_FILE]\n",
			want: []command.Command{
				perr(1, "a.py", "CREATE_FILE for 'a.py' (line 1) has no closing [/CREATE_FILE] before the CREATE_FILE tag at line 3"),
				{Type: command.CreateFile, Path: "b.py", Content: "B = 2\n", Line: 3},
			},
		},
		{
			name: "other commands inside an unclosed file body are listed, not run",
			reply: "[CREATE_FILE path=\"docs/usage.md\"]\n" +
				"Example:\n" +
				"[RUN_COMMAND]\n" +
				"rm -rf build\n" +
				"[/RUN_COMMAND]\n" +
				"[DONE]\n" +
				"finished\n" +
				"[/DONE]\n",
			want: []command.Command{
				perr(1, "docs/usage.md", "has no closing [/CREATE_FILE]",
					"The 2 command tags inside the unclosed block were not run either (RUN_COMMAND at line 3, DONE at line 6)"),
			},
		},
		{
			name:  "a wrong closing tag is pointed out",
			reply: "[CREATE_FILE path=\"x.go\"]\npackage x\n[/CREATE]\n",
			want: []command.Command{
				perr(1, "x.go", "has no closing [/CREATE_FILE]", "Line 3 has [/CREATE], which does not close it"),
			},
		},
		{
			name: "a closed file body may hold other tags",
			reply: "[CREATE_FILE path=\"PROTOCOL.md\"]\n" +
				"Send commands like:\n" +
				"[RUN_COMMAND]\n" +
				"make test\n" +
				"[/RUN_COMMAND]\n" +
				"[/CREATE_FILE]\n",
			want: []command.Command{{Type: command.CreateFile, Path: "PROTOCOL.md", Line: 1,
				Content: "Send commands like:\n[RUN_COMMAND]\nmake test\n[/RUN_COMMAND]\n"}},
		},
		{
			name: "unclosed run command ends at the next command tag",
			reply: "[RUN_COMMAND]\n" +
				"npm install\n" +
				"[READ_FILE path=\"package.json\"]\n",
			want: []command.Command{
				perr(1, "", "RUN_COMMAND (line 1) has no closing [/RUN_COMMAND] before the READ_FILE tag at line 3", "The command was not run"),
				{Type: command.ReadFile, Path: "package.json", Line: 3},
			},
		},
		{
			name:  "unclosed message at the end",
			reply: "[MESSAGE]\nI was about to say",
			want:  []command.Command{perr(1, "", "MESSAGE (line 1) has no closing [/MESSAGE]", "cut off")},
		},
		{
			name:  "unclosed edit",
			reply: "[EDIT_FILE path=\"a.c\"]\n<<<<<<< SEARCH\nint x;\n=======\n",
			want: []command.Command{
				perr(1, "a.c", "EDIT_FILE for 'a.c' (line 1) has no closing [/EDIT_FILE]", "The file was not changed"),
			},
		},
		{
			name:  "DONE without closing tag followed by other commands is not done",
			reply: "[DONE]\nAll finished.\n[RUN_COMMAND]\nls\n[/RUN_COMMAND]\n",
			want: []command.Command{
				perr(1, "", "DONE (line 1) has no closing [/DONE] before the RUN_COMMAND tag at line 3", "put [DONE] ... [/DONE] last"),
				{Type: command.RunCommand, Command: "ls", Line: 3},
			},
		},
		{
			name:  "bare DONE as the last line",
			reply: "Everything works now.\n\n[DONE]\n",
			want:  []command.Command{{Type: command.Done, Text: "", Line: 3}},
		},
		{
			name:  "thousands of unclosed tags each get one line",
			reply: strings.Repeat("[CREATE_FILE path=\"a\"]\n", 3) + "[CREATE_FILE path=\"b\"]\nok\n[/CREATE_FILE]\n",
			want: []command.Command{
				perr(1, "a", "before the CREATE_FILE tag at line 2"),
				perr(2, "a", "before the CREATE_FILE tag at line 3"),
				perr(3, "a", "before the CREATE_FILE tag at line 4"),
				{Type: command.CreateFile, Path: "b", Content: "ok\n", Line: 4},
			},
		},
	})
}

func TestParseBadAttributes(t *testing.T) {
	long := strings.Repeat("d/", 2100) + "f"
	runCases(t, []parseCase{
		{
			name: "missing and empty paths",
			reply: "[DELETE_FILE]\n" +
				"[DELETE_FILE path=\"\"]\n" +
				"[CREATE_FILE path=\"  \"]\nx\n[/CREATE_FILE]\n" +
				"[EDIT_FILE start_line=\"1\" end_line=\"2\"]\ny\n[/EDIT_FILE]\n",
			want: []command.Command{
				perr(1, "", "DELETE_FILE (line 1) has no path attribute", "Nothing was deleted"),
				perr(2, "", "DELETE_FILE (line 2) has an empty path"),
				perr(3, "", "CREATE_FILE (line 3) has an empty path", "Nothing was written"),
				perr(6, "", "EDIT_FILE (line 6) has no path attribute"),
			},
		},
		{
			name: "paths with control characters or too long",
			reply: "[DELETE_FILE path=\"a\tb\"]\n" +
				"[READ_FILE path=\"" + long + "\"]\n" +
				"[CREATE_FILE path=\"" + strings.Repeat("n", 256) + ".txt\"]\nx\n[/CREATE_FILE]\n" +
				"[DELETE_FILE path=\"esc\x1b[2Jape\"]\n",
			want: []command.Command{
				perr(1, "", "has a control character in its path \"a\\tb\""),
				perr(2, "", "has a path of 4201 bytes; paths may have at most 4096"),
				perr(3, "", "has a path component of 260 bytes"),
				perr(6, "", `"esc\x1b[2Jape"`),
			},
		},
		{
			name: "bad line numbers",
			reply: "[EDIT_FILE path=\"a\" start_line=\"3\"]\nx\n[/EDIT_FILE]\n" +
				"[EDIT_FILE path=\"a\" start_line=\"three\" end_line=\"4\"]\nx\n[/EDIT_FILE]\n" +
				"[EDIT_FILE path=\"a\" start_line=\"0\" end_line=\"4\"]\nx\n[/EDIT_FILE]\n" +
				"[EDIT_FILE path=\"a\" start_line=\"9\" end_line=\"4\"]\nx\n[/EDIT_FILE]\n" +
				"[READ_FILE path=\"a\" lines=\"ten\"]\n" +
				"[READ_FILE path=\"a\" lines=\"20-10\"]\n" +
				"[READ_FILE path=\"a\" end_line=\"10\"]\n",
			want: []command.Command{
				perr(1, "a", "EDIT_FILE for 'a' (line 1) has only one of start_line and end_line"),
				perr(4, "a", "start_line='three'", "whole numbers"),
				perr(7, "a", "start_line='0'"),
				perr(10, "a", "has end_line 4 before start_line 9"),
				perr(13, "a", "READ_FILE for 'a' (line 13) has lines='ten'"),
				perr(14, "a", "asks for lines 20 to 10"),
				perr(15, "a", "has only one of start_line and end_line"),
			},
		},
		{
			name: "syntax problems in tags",
			reply: "[DELETE_FILE path=\"a.txt]\n" +
				"[DELETE_FILE src/b.txt]\n" +
				"[DELETE_FILE path=\"c\" path=\"d\"]\n" +
				"[RUN_COMMAND timeout=\"soon\"]\nls\n[/RUN_COMMAND]\n" +
				"[RUN_COMMAND]\n\n[/RUN_COMMAND]\n" +
				"[READ_FILE path=\"e\"\n" +
				"[RUN_COMMAND cwd=\"a\x07b\"]\nls\n[/RUN_COMMAND]\n" +
				"[RUN_COMMAND timeout=\"99999999999999\"]\nls\n[/RUN_COMMAND]\n",
			want: []command.Command{
				perr(1, "", "the value of path has no closing quote"),
				perr(2, "", "has no path attribute"),
				perr(3, "d", "the attribute path is given twice"),
				perr(4, "", "RUN_COMMAND (line 4) has timeout='soon'"),
				perr(7, "", "RUN_COMMAND (line 7) has an empty body"),
				perr(10, "e", "the tag has no closing ']'"),
				perr(11, "", "RUN_COMMAND (line 11) has a control character in its cwd"),
				perr(14, "", "has timeout='99999999999999', which is too long"),
			},
		},
		{
			name: "text after a tag",
			reply: "[CREATE_FILE path=\"a.py\"] Here is the file:\nx = 1\n[/CREATE_FILE]\n" +
				"[READ_FILE path=\"b.py\"] so I can see it\n" +
				"[RUN_COMMAND] npm test\n[/RUN_COMMAND]\n",
			want: []command.Command{
				perr(1, "a.py", "has text after the tag ('Here is the file:')", "Nothing was written"),
				perr(4, "b.py", "has text after the tag ('so I can see it')"),
				perr(5, "", "RUN_COMMAND (line 5) has text after the tag ('npm test')"),
			},
		},
		{
			name:  "edit with neither form explains both",
			reply: "[EDIT_FILE path=\"a.go\"]\nfunc x() {}\n[/EDIT_FILE]\n",
			want: []command.Command{
				perr(1, "a.go", "has neither start_line/end_line attributes nor SEARCH/REPLACE pairs",
					`[EDIT_FILE path="a.go" start_line="N" end_line="M"]`, "<<<<<<< SEARCH"),
			},
		},
	})
}

func TestParseUnknownTags(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "unknown commands are reported with the valid ones",
			reply: "[WRITE_FILE path=\"x.txt\"]\nhello\n[/WRITE_FILE]\n" +
				"[CREATE FILE path=\"y.txt\"]\n" +
				"[EDIT path=\"z.txt\"]\n" +
				"[RUN]\n" +
				"[RUN_COMMANDS]\nls\n[/RUN_COMMANDS]\n" +
				"[SHELL_EXEC]\nls\n[/SHELL_EXEC]\n",
			want: []command.Command{
				perr(1, "", "[WRITE_FILE] at line 1 is not a courier command, so its block (lines 1-3) was ignored",
					"Did you mean [CREATE_FILE]?", "CREATE_FILE, EDIT_FILE, DELETE_FILE, READ_FILE, RUN_COMMAND, MESSAGE, DONE"),
				perr(4, "", "[CREATE FILE] at line 4", "Did you mean [CREATE_FILE]?"),
				perr(5, "", "[EDIT] at line 5", "Did you mean [EDIT_FILE]?"),
				perr(6, "", "[RUN] at line 6", "Did you mean [RUN_COMMAND]?"),
				perr(7, "", "[RUN_COMMANDS] at line 7", "lines 7-9", "Did you mean [RUN_COMMAND]?"),
				perr(10, "", "[SHELL_EXEC] at line 10", "lines 10-12"),
			},
		},
		{
			name: "markdown that looks like tags is prose",
			reply: "[NOTE]\nThis is important.\n" +
				"[Note] lower case with a closer\n[/Note]\n" +
				"[x]\n[TODO]\n[INFO]\n[1]\n[NONE]\n" +
				"[link text](https://example.com)\n[DONE](https://example.com/done)\n",
			want: nil,
		},
		{
			name: "a stray closing tag shows a lost block",
			reply: "**[CREATE_FILE path=\"a.py\"]**\nprint(1)\n[/CREATE_FILE]\n" +
				"`[RUN_COMMAND]`\nls\n[/RUN_COMMAND]\n" +
				"[/READ_FILE]\n",
			want: []command.Command{
				perr(3, "", "[/CREATE_FILE] at line 3 closes nothing", "Put the opening tag alone at the start of its own line"),
				perr(6, "", "[/RUN_COMMAND] at line 6 closes nothing"),
			},
		},
		{
			name:  "a stray closing tag after code could have closed a lost block",
			reply: "```python\nprint(1)\n```\n[/CREATE_FILE]\n[DONE]\nok\n[/DONE]\n",
			want: []command.Command{
				perr(4, "", "[/CREATE_FILE] at line 4 closes nothing"),
				{Type: command.Done, Text: "ok", Line: 5},
			},
		},
		{
			name:  "a stray closing tag after a file's lines could have closed a lost block",
			reply: "[RUN_COMMAND]\nls\n[/RUN_COMMAND]\ndef f():\n    return 1\n[/CREATE_FILE]\n# Title\n\nSome text.\n[/CREATE_FILE]\n",
			want: []command.Command{
				{Type: command.RunCommand, Command: "ls", Line: 1},
				perr(6, "", "[/CREATE_FILE] at line 6 closes nothing"),
				perr(10, "", "[/CREATE_FILE] at line 10 closes nothing"),
			},
		},
	})
}

// A closing tag with nothing before it that could have been its block is
// ignored: it loses nothing, and holds back no DONE.
func TestParseIgnoresAStrayClosingTagThatClosedNothing(t *testing.T) {
	done := command.Command{Type: command.Done, Text: "ok", Line: 0}
	withDone := func(line int) []command.Command {
		d := done
		d.Line = line
		return []command.Command{d}
	}
	runCases(t, []parseCase{
		{name: "on the first line", reply: "[/CREATE_FILE]\n[DONE]\nok\n[/DONE]\n", want: withDone(2)},
		{name: "after the header", reply: "Session: a1b2c3d4\nSequence: 2\n\n[/CREATE_FILE]\n[DONE]\nok\n[/DONE]\n", want: withDone(5)},
		{name: "after a decorated header", reply: "**Session:** a1b2c3d4\n**Sequence:** 2\n[/RUN_COMMAND]\n[DONE]\nok\n[/DONE]\n", want: withDone(4)},
		{name: "after prose", reply: "Sure, all tests pass now.\nHere is the summary:\n\n[/EDIT_FILE]\n[DONE]\nok\n[/DONE]\n", want: withDone(5)},
		{name: "after reasoning", reply: "<think>\nlet me see (x = 1)\n</think>\n[/MESSAGE]\n[DONE]\nok\n[/DONE]\n", want: withDone(5)},
		{
			name:  "right after another block's closer",
			reply: "[RUN_COMMAND]\ngo test ./...\n[/RUN_COMMAND]\n[/RUN_COMMAND]\n\n[DONE]\nok\n[/DONE]\n",
			want:  []command.Command{{Type: command.RunCommand, Command: "go test ./...", Line: 1}, withDone(6)[0]},
		},
	})
	got := Parse("Session: a1b2c3d4\nSequence: 2\n[/CREATE_FILE]\n[DONE]\nok\n[/DONE]\n")
	if got.Session != "a1b2c3d4" || got.Sequence != 2 {
		t.Errorf("header = %q, %d; want a1b2c3d4, 2", got.Session, got.Sequence)
	}
}

func TestParseCapsErrorEntries(t *testing.T) {
	reply := strings.Repeat("[RUN_COMMAND]\n", maxErrors+50) + "[DELETE_FILE path=\"kept\"]\n"
	cmds := Parse(reply).Commands
	if len(cmds) != maxErrors+2 {
		t.Fatalf("got %d commands, want %d errors, a summary and the delete", len(cmds), maxErrors+2)
	}
	sum := cmds[maxErrors]
	if sum.Type != command.ParseError || sum.Line != maxErrors+1 ||
		!strings.Contains(sum.Error, "50 more problems from line 101") {
		t.Errorf("summary entry %s", dumpOne(sum))
	}
	if last := cmds[maxErrors+1]; last.Type != command.DeleteFile || last.Path != "kept" || last.Line != maxErrors+51 {
		t.Errorf("last entry %s", dumpOne(last))
	}
	checkParseInvariants(t, reply)
}

// Problems stop being listed at maxErrors, so they tell nothing of how many
// commands are to come: a reply of nothing but problems must not make the
// parser reserve room for more commands, as if each were one.
func TestParseReservesNoRoomForUnlistedProblems(t *testing.T) {
	for _, a := range adversarial {
		switch a.name {
		case "unclosed", "swallowing", "unknown", "think", "invisible":
		default:
			continue
		}
		t.Run(a.name, func(t *testing.T) {
			cmds := Parse(a.gen(1 << 20)).Commands
			if len(cmds) > maxErrors+2 {
				t.Fatalf("%d commands; this input is meant to give problems only", len(cmds))
			}
			if cap(cmds) > 4*len(cmds)+16 {
				t.Errorf("room for %d commands kept for %d", cap(cmds), len(cmds))
			}
		})
	}
}
