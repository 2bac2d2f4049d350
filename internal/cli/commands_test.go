package cli

import (
	"context"
	"reflect"
	"testing"

	"github.com/spf13/cobra"
)

// keep is a run function that keeps the options it is given.
func keep[O any](got *any) func(*O) error {
	return func(o *O) error { *got = *o; return nil }
}

// Each command's flags and arguments reach its options: the command line
// is parsed as courier parses it, and the run function sees the result
// without courier running anything.
func TestCommandLinesReachTheOptions(t *testing.T) {
	g, ctx := &globals{io: &IO{}}, context.Background()
	tests := []struct {
		name string
		cmd  func(got *any) *cobra.Command
		args []string
		want any // nil: the command line is refused before the run
	}{
		{"undo", func(got *any) *cobra.Command { return newUndoCmd(g, keep[undoOptions](got)) },
			[]string{"3f9a1c2e"}, undoOptions{g: g, id: "3f9a1c2e"}},
		{"approve", func(got *any) *cobra.Command { return newApproveCmd(g, keep[decideOptions](got)) },
			[]string{"--all"}, decideOptions{g: g, ctx: ctx, approve: true, all: true}},
		{"deny", func(got *any) *cobra.Command { return newDenyCmd(g, keep[decideOptions](got)) },
			[]string{"3f9a1c2e", "--reason", "not here"}, decideOptions{g: g, ctx: ctx, id: "3f9a1c2e", reason: "not here"}},
		{"new", func(got *any) *cobra.Command { return newNewCmd(g, keep[newOptions](got)) },
			[]string{"--no-watch", "--include", "*.go", "--include", "go.mod", "--protocol", "json", "add", "a flag"},
			newOptions{g: g, ctx: ctx, words: []string{"add", "a flag"}, noWatch: true, includes: []string{"*.go", "go.mod"}, protocol: "json"}},
		{"new unknown protocol", func(got *any) *cobra.Command { return newNewCmd(g, keep[newOptions](got)) },
			[]string{"--protocol", "xml", "task"}, nil},
		{"continue", func(got *any) *cobra.Command { return newContinueCmd(g, keep[newOptions](got)) },
			[]string{"--json", "3f9a1c2e", "more"}, newOptions{g: g, ctx: ctx, words: []string{"3f9a1c2e", "more"}, json: true}},
		{"diff", func(got *any) *cobra.Command { return newDiffCmd(g, keep[diffOptions](got)) },
			[]string{"3f9a1c2e", "4"}, diffOptions{g: g, id: "3f9a1c2e", seq: 4}},
		{"diff turn only", func(got *any) *cobra.Command { return newDiffCmd(g, keep[diffOptions](got)) },
			[]string{"2"}, diffOptions{g: g, seq: 2}},
		{"diff neither", func(got *any) *cobra.Command { return newDiffCmd(g, keep[diffOptions](got)) },
			[]string{"latest"}, nil},
		{"log", func(got *any) *cobra.Command { return newLogCmd(g, keep[logOptions](got)) },
			[]string{"--json", "--output"}, logOptions{g: g, json: true, output: true}},
		{"process", func(got *any) *cobra.Command { return newProcessCmd(g, keep[processOptions](got)) },
			[]string{"--session", "3f9a1c2e", "reply.md"}, processOptions{g: g, ctx: ctx, file: "reply.md", session: "3f9a1c2e"}},
		{"ops resume", func(got *any) *cobra.Command { return newOpsResumeCmd(g, keep[resumeOptions](got)) },
			[]string{"3f9a1c2e", "--deny", "s2", "--reason", "no"}, resumeOptions{g: g, ctx: ctx, id: "3f9a1c2e", deny: "s2", reason: "no"}},
		{"ops resume stdin", func(got *any) *cobra.Command { return newOpsResumeCmd(g, keep[resumeOptions](got)) },
			[]string{"3f9a1c2e", "-"}, resumeOptions{g: g, ctx: ctx, id: "3f9a1c2e", stdin: true}},
		{"policy check", func(got *any) *cobra.Command { return newPolicyCmd(g, keep[policyOptions](got)) },
			[]string{"check", "--json", "rm", "-rf", "/"}, policyOptions{g: g, command: "rm -rf /", json: true}},
		{"serve", func(got *any) *cobra.Command { return newServeCmd(g, keep[serveOptions](got)) },
			[]string{"--addr", "127.0.0.1:8080", "--no-open"}, serveOptions{g: g, ctx: ctx, addr: "127.0.0.1:8080", noOpen: true}},
	}
	for _, tt := range tests {
		var got any
		cmd := tt.cmd(&got)
		cmd.SetArgs(tt.args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.ExecuteContext(ctx)
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("%s %q: accepted, options %+v", tt.name, tt.args, got)
		case tt.want != nil && err != nil:
			t.Errorf("%s %q: %v", tt.name, tt.args, err)
		case !reflect.DeepEqual(got, tt.want):
			t.Errorf("%s %q: options %+v, want %+v", tt.name, tt.args, got, tt.want)
		}
	}
}
