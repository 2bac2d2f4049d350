package protocol

import (
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

func TestParseReasoningSections(t *testing.T) {
	runCases(t, []parseCase{
		{
			name: "thinking tag, closed on the same line as text",
			reply: "<thinking>Let me check the file first. [READ_FILE path=\"x\"]\n" +
				"[READ_FILE path=\"draft\"]\n" +
				"ok, I know what to do.</thinking>\n" +
				"[READ_FILE path=\"main.go\"]\n",
			want: []command.Command{{Type: command.ReadFile, Path: "main.go", Line: 4}},
		},
		{
			name:  "one-line think section",
			reply: "<think>short</think>\n[DELETE_FILE path=\"a\"]\n",
			want:  []command.Command{{Type: command.DeleteFile, Path: "a", Line: 2}},
		},
		{
			name: "only a closing tag: everything before it was reasoning",
			reply: "Okay, the user wants tests. Draft:\n" +
				"[RUN_COMMAND]\nrm -rf /tmp/x\n[/RUN_COMMAND]\n" +
				"Session: deadbeef\n" +
				"</think>\n\n" +
				"Session: 0badcafe\n" +
				"[RUN_COMMAND]\ngo test ./...\n[/RUN_COMMAND]\n",
			want: []command.Command{{Type: command.RunCommand, Command: "go test ./...", Line: 9}},
		},
		{
			name:  "unclosed think with commands in it is reported",
			reply: "<think>\nI'll create it:\n[CREATE_FILE path=\"a.txt\"]\nx\n[/CREATE_FILE]\n",
			want: []command.Command{perr(1, "", "reasoning section opened at line 1 (<think>) is never closed",
				"1 command tag in it (CREATE_FILE at line 3) was not run", "</think>")},
		},
		{
			name:  "unclosed think without commands gives nothing",
			reply: "<think>\nHmm, let me think about",
			want:  nil,
		},
		{
			name:  "think inside a file body is file content",
			reply: "[CREATE_FILE path=\"prompt.txt\"]\n<think>\nplan\n</think>\n[/CREATE_FILE]\n",
			want:  []command.Command{{Type: command.CreateFile, Path: "prompt.txt", Content: "<think>\nplan\n</think>\n", Line: 1}},
		},
		{
			name:  "a closing think tag after a think section is prose",
			reply: "<think>a</think>\n[DELETE_FILE path=\"k\"]\n</think>\n",
			want:  []command.Command{{Type: command.DeleteFile, Path: "k", Line: 2}},
		},
	})
}

func TestParseHeaderEcho(t *testing.T) {
	cases := []struct {
		name, reply string
		session     string
		sequence    int
	}{
		{"plain", "Session: a1b2c3d4\nSequence: 3\n[DONE]\n[/DONE]\n", "a1b2c3d4", 3},
		{"bold upper case", "**Session:** A1B2C3D4  \n**Sequence:** 12\n", "a1b2c3d4", 12},
		{"bold key", "**Session**: 0a0b0c0d\n**Sequence**: 2\n", "0a0b0c0d", 2},
		{"markdown decoration", "# Session: 11112222\n> Sequence: 5\n", "11112222", 5},
		{"list items", "- Session: `abcdabcd`\n- Sequence: `4`\n", "abcdabcd", 4},
		{"inside a fence after prose", "Here you go.\n```\nSession: 12ab34cd\nSequence: 9\n```\n", "12ab34cd", 9},
		{"echoed header block", "=== HEADER ===\nSession: feedface\nSequence: 1\nTask: build it\n", "feedface", 1},
		{"not a hex id", "Session: zzzzzzzz\nSequence: three\n", "", 0},
		{"wrong length", "Session: a1b2c3d\nSequence: 0\n", "", 0},
		{"after the first command it is content", "[DELETE_FILE path=\"a\"]\nSession: a1b2c3d4\nSequence: 3\n", "", 0},
		{"first one wins", "Session: 11111111\nSession: 22222222\n", "11111111", 0},
		{"inside reasoning it does not count", "<think>\nSession: 11111111\n</think>\nSequence: 2\n", "", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse(tc.reply)
			if r.Session != tc.session || r.Sequence != tc.sequence {
				t.Errorf("got session %q sequence %d, want %q %d", r.Session, r.Sequence, tc.session, tc.sequence)
			}
		})
	}
}
