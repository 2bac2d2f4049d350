package protocol

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

// contentLines are file lines that must survive any wrapping: code,
// blanks, indentation, fences and tag-like text in the middle of a file.
var contentLines = []string{
	"package main", "", "    indented four", "\tindented tab", "  two", "}",
	"```", "```go", "~~~", "[RUN_COMMAND]", "[/RUN_COMMAND]", "[DONE]", "- [x] item",
	"<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", "<think>", "</think>",
	"Session: a1b2c3d4", "naïve “quotes” 日本語", "x := []int{1, 2}", "[1, 2, 3]",
	"  [/EDIT_FILE]", "# heading", "> quote",
}

// randomContent makes file content whose first and last lines are not
// fences or blank, so no rule may strip them.
func randomContent(r *rand.Rand) string {
	n := 1 + r.IntN(12)
	lines := make([]string, n)
	for i := range lines {
		lines[i] = contentLines[r.IntN(len(contentLines))]
	}
	lines[0] = "first line"
	lines[n-1] = "last line"
	return strings.Join(lines, "\n") + "\n"
}

// wrapBlock writes a CREATE_FILE block the way one of several chat styles
// would, and returns it with the line count before its tag line.
func wrapBlock(r *rand.Rand, path, content string) (block string, tagOffset int) {
	body := content
	switch r.IntN(3) {
	case 1:
		body = "```" + []string{"go", "python", "text"}[r.IntN(3)] + "\n" + body + "```\n"
	case 2:
		// An unlabelled wrapper is recognised when the fences inside pair.
		if _, fenced := openFence(content); !fenced && !strings.Contains(content, "\n```") && !strings.Contains(content, "\n~~~") {
			body = "\n```\n" + body + "```\n\n"
		}
	}
	block = fmt.Sprintf("[CREATE_FILE path=%q]\n%s[/CREATE_FILE]\n", path, body)
	switch r.IntN(4) {
	case 1: // in its own fence
		return "```\n" + block + "```\n", 1
	case 2: // in a numbered list item
		indented := strings.ReplaceAll(strings.TrimSuffix(block, "\n"), "\n", "\n   ")
		return "1. " + indented + "\n", 0
	case 3: // indented four spaces
		indented := strings.ReplaceAll(strings.TrimSuffix(block, "\n"), "\n", "\n    ")
		return "    " + indented + "\n", 0
	}
	return block, 0
}

func TestParseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		var reply strings.Builder
		var want []command.Command
		line := 1
		for j := range 1 + r.IntN(4) {
			prose := []string{"Here you go:\n\n", "### Step\n", "", "Some text with [DONE] inside.\n"}[r.IntN(4)]
			reply.WriteString(prose)
			line += strings.Count(prose, "\n")
			path := fmt.Sprintf("dir/file%d.go", j)
			content := randomContent(r)
			block, offset := wrapBlock(r, path, content)
			want = append(want, command.Command{Type: command.CreateFile, Path: path, Content: content, Line: line + offset})
			reply.WriteString(block)
			line += strings.Count(block, "\n")
		}
		got := Parse(reply.String()).Commands
		if len(got) != len(want) {
			t.Fatalf("case %d: got %d commands, want %d\nreply:\n%s\ngot:\n%s", i, len(got), len(want), reply.String(), dump(got))
		}
		for k := range want {
			if !equalCommand(got[k], want[k]) {
				t.Fatalf("case %d, command %d:\n got %s\nwant %s\nreply:\n%s", i, k, dumpOne(got[k]), dumpOne(want[k]), reply.String())
			}
		}
	}
}
