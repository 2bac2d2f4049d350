package protocol

import (
	"reflect"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/reply"
)

// FuzzParse checks what must hold for any input: Parse and Decode never
// panic, every line is accounted for exactly once (the spans tile the
// reply), commands come in order with their Line at their block's start,
// and parsing is deterministic. Seeds live in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte("[CREATE_FILE path=\"a\"]\nx\n[/CREATE_FILE]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParseInvariants(t, string(data))
		if text, err := reply.Decode(string(data)); err == nil {
			checkParseInvariants(t, text)
		}
	})
}

func checkParseInvariants(t *testing.T, text string) {
	r, spans := parseSpans(text)
	lines := strings.Count(strings.ReplaceAll(text, "\r\n", "\n"), "\n") + 1
	checkTiling(t, spans, lines, len(r.Commands))
	firstSpan := make([]int, len(r.Commands))
	for i := range firstSpan {
		firstSpan[i] = -1
	}
	for _, s := range spans {
		if s.cmd >= 0 && firstSpan[s.cmd] < 0 {
			firstSpan[s.cmd] = s.first
		}
	}
	prevLine := 0
	for i, c := range r.Commands {
		if firstSpan[i] < 0 {
			t.Fatalf("command %d has no lines: %s", i, dumpOne(c))
		}
		if c.Line != firstSpan[i]+1 || c.Line < prevLine {
			t.Fatalf("command %d has Line %d, its block starts at line %d (previous command at %d)", i, c.Line, firstSpan[i]+1, prevLine)
		}
		prevLine = c.Line
		checkCommand(t, c)
	}
	again, _ := parseSpans(text)
	if !reflect.DeepEqual(r, again) {
		t.Fatalf("parsing twice gave different results")
	}
}

// checkTiling checks that the spans cover lines [0, lines) in order, with
// no gap and no overlap, and name only existing commands.
func checkTiling(t *testing.T, spans []span, lines, cmds int) {
	next := 0
	for _, s := range spans {
		if s.first != next || s.end <= s.first {
			t.Fatalf("span %+v does not follow line %d; spans %+v", s, next, spans)
		}
		if s.cmd < -1 || s.cmd >= cmds {
			t.Fatalf("span %+v names command %d of %d", s, s.cmd, cmds)
		}
		next = s.end
	}
	if next != lines {
		t.Fatalf("spans end at line %d, the reply has %d lines", next, lines)
	}
}

func checkCommand(t *testing.T, c command.Command) {
	switch c.Type {
	case command.ParseError:
		if c.Error == "" {
			t.Fatalf("parse error without text at line %d", c.Line)
		}
	case command.CreateFile, command.EditFile, command.DeleteFile, command.ReadFile:
		if c.Path == "" || checkPath(c.Path) != "" {
			t.Fatalf("%s with bad path %q", c.Type, c.Path)
		}
		if c.Content != "" && !strings.HasSuffix(c.Content, "\n") {
			t.Fatalf("%s content without final newline: %q", c.Type, c.Content)
		}
	case command.RunCommand:
		if strings.TrimSpace(c.Command) == "" {
			t.Fatalf("empty RUN_COMMAND at line %d", c.Line)
		}
	case command.Message, command.Done:
	default:
		t.Fatalf("unknown command type %q", c.Type)
	}
}
