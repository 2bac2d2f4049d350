package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

// parseCase is one reply and the commands it must give.
type parseCase struct {
	name  string
	reply string
	want  []command.Command
}

// fragSep separates the fragments a wanted PARSE_ERROR text must contain.
const fragSep = "\x1f"

// perr is a wanted PARSE_ERROR: its Error must contain every fragment.
func perr(line int, path string, frags ...string) command.Command {
	return command.Command{Type: command.ParseError, Line: line, Path: path, Error: strings.Join(frags, fragSep)}
}

func runCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Parse(tc.reply)
			checkCommands(t, got.Commands, tc.want)
			// The fuzz invariants hold for every realistic reply too.
			checkParseInvariants(t, tc.reply)
		})
	}
}

func checkCommands(t *testing.T, got, want []command.Command) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d commands, want %d:\n%s", len(got), len(want), dump(got))
	}
	for i := range want {
		g, w := got[i], want[i]
		if w.Type == command.ParseError && g.Type == command.ParseError {
			for _, frag := range strings.Split(w.Error, fragSep) {
				if !strings.Contains(g.Error, frag) {
					t.Errorf("command %d: error %q lacks %q", i, g.Error, frag)
				}
			}
			g.Error, w.Error = "", ""
		}
		if !equalCommand(g, w) {
			t.Errorf("command %d:\n got %s\nwant %s", i, dumpOne(g), dumpOne(w))
		}
	}
}

func equalCommand(a, b command.Command) bool {
	if len(a.Edits) == 0 && len(b.Edits) == 0 {
		a.Edits, b.Edits = nil, nil
	}
	if len(a.Env) == 0 && len(b.Env) == 0 {
		a.Env, b.Env = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

func dump(cmds []command.Command) string {
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(dumpOne(c))
		b.WriteString("\n")
	}
	return b.String()
}

func dumpOne(c command.Command) string {
	data, _ := json.Marshal(c)
	return string(data)
}
