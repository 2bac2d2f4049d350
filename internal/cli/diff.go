package cli

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/console"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/termtext"
)

type diffOptions struct {
	g   *globals
	id  string
	seq int
}

func newDiffCmd(g *globals, runF func(*diffOptions) error) *cobra.Command {
	o := &diffOptions{g: g}
	return &cobra.Command{
		Use:   "diff [ID] [TURN]",
		Short: "Show the unified diff of what a turn changed",
		Long: `Show what the turn answering request TURN (default: the last one applied) of
the session ID (default: the most recently updated) changed in the
workspace, commands included: a unified diff of text files, binary and
large files, modes and symlinks on "#" lines.`,
		Example: `  courier diff
  courier diff 3f9a1c2e 4`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.id, o.seq, err = sessionAndTurn(args); err != nil {
				return err
			}
			return run(runF, diffRun, o)
		},
	}
}

func diffRun(o *diffOptions) error {
	b, err := o.g.runner(view{})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := b.Diff(&out, o.id, o.seq); err != nil {
		return err
	}
	if out.Len() == 0 && o.seq > 0 {
		_, err = fmt.Fprintf(o.g.io.Out, "No change: the reply to request %d changed nothing in the workspace\n", o.seq)
		return err
	} else if out.Len() == 0 {
		_, err = fmt.Fprintln(o.g.io.Out, "No change: the last reply applied changed nothing in the workspace")
		return err
	}
	text := out.String()
	if o.g.io.OutTerminal {
		text = termtext.Safe(text)
	}
	if o.g.colour() {
		text = colourDiff(text)
	}
	_, err = io.WriteString(o.g.io.Out, text)
	return err
}

// colourDiff colours a diff's lines as git does: added green, removed red,
// hunks cyan, courier's notes on files bold.
func colourDiff(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		code := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "#"):
			code = "\x1b[1m"
		case strings.HasPrefix(l, "+"):
			code = "\x1b[32m"
		case strings.HasPrefix(l, "-"):
			code = "\x1b[31m"
		case strings.HasPrefix(l, "@@"):
			code = "\x1b[36m"
		}
		if body := strings.TrimSuffix(l, "\n"); code != "" {
			lines[i] = code + body + "\x1b[0m" + l[len(body):]
		}
	}
	return strings.Join(lines, "")
}

// sessionAndTurn reads [ID] [TURN].
func sessionAndTurn(args []string) (string, int, error) {
	id := ""
	if len(args) > 0 && history.ValidID(args[0]) {
		id, args = args[0], args[1:]
	}
	if len(args) == 0 {
		return id, 0, nil
	}
	seq, err := strconv.Atoi(args[0])
	if err != nil || seq < 1 || len(args) > 1 {
		return "", 0, usage(withHint(fmt.Errorf("%q is neither a session id nor a request number", args[0]), "courier diff [ID] [TURN], e.g. courier diff 3f9a1c2e 4"))
	}
	return id, seq, nil
}

type gcOptions struct {
	g  *globals
	id string
}

func newGCCmd(g *globals, runF func(*gcOptions) error) *cobra.Command {
	o := &gcOptions{g: g}
	return &cobra.Command{
		Use:   "gc [ID]",
		Short: "Drop the oldest turns' snapshots beyond the snapshot budget, and finished sessions' cache layers",
		Long: `Bring the snapshots of the session ID (default: the most recently updated)
within snapshot_budget by dropping the oldest turns' snapshots: those turns
can no longer be undone. courier does this after every turn too.

Remove the cache layers (ROOT/cache/sessions) of the sessions that are
complete or gone: what their commands wrote into the tool caches.`,
		Example: `  courier gc
  courier --snapshot-budget 100MB gc 3f9a1c2e`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, gcRun),
	}
}

func gcRun(o *gcOptions) error {
	b, err := o.g.runner(view{use: writing})
	if err != nil {
		return err
	}
	rep, budget, err := b.GC(o.id)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.g.io.Out, "Snapshots take %s (budget %s); freed %s\n", human.Bytes(rep.Size), human.Bytes(budget), human.Bytes(rep.Freed))
	if w := rep.Warning(budget); w != "" {
		b.text.Warn(w, "")
	}
	// The cache layers of sessions complete or gone go too.
	caches, removed := filepath.Join(b.Paths().Root, "cache"), 0
	for _, id := range sandbox.LayerSessions(caches) {
		if _, err := os.Stat(history.Store{Dir: b.Paths().Sessions}.Folder(id)); err == nil {
			if info, err := b.Status(id); err != nil || !info.Complete {
				continue // a session going on keeps its layer
			}
		}
		if err = sandbox.RemoveLayer(caches, id); err != nil {
			break
		}
		removed++
	}
	if removed > 0 {
		fmt.Fprintf(o.g.io.Out, "Removed the cache layers of %d finished sessions\n", removed)
	}
	return err
}

type undoOptions struct {
	g  *globals
	id string
}

func newUndoCmd(g *globals, runF func(*undoOptions) error) *cobra.Command {
	o := &undoOptions{g: g}
	return &cobra.Command{
		Use:   "undo [ID]",
		Short: "Put the workspace back as it was before the last applied reply",
		Long: `Put the workspace back as it was before the session's last applied reply,
what its commands did included: files it created are removed, files it
edited, deleted or whose mode it changed are restored. Paths .gitignore
leaves out of snapshots (node_modules, build outputs) are not put back,
unless snapshot_include names them, and undo says so; with snapshots =
false only what file commands did is reverted. courier writes a new outbox
telling the LLM what was undone. Run it again to walk back further. A run
of 'courier ops' stays complete and gets no outbox: it has no LLM to tell.
When 'courier watch' holds the session in another terminal, waiting for
the next reply, the undo is given to it: it undoes the turn and writes the
new request there.`,
		Example: `  courier undo
  courier undo 3f9a1c2e`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, undoRun),
	}
}

func undoRun(o *undoOptions) error {
	b, err := o.g.runner(view{use: writing})
	if err != nil {
		return err
	}
	h, err := b.Undo(o.id)
	switch {
	case h != nil && h.Outbox != "":
		fmt.Fprintf(o.g.io.Out, "Gave the undo to the %s holding session %s, which undid the changes of the reply to request %d: next request %s\n", h.Holder, h.Session, h.Sequence, b.text.Rel(h.Outbox))
	case h != nil:
		fmt.Fprintf(o.g.io.Out, "Gave the undo to the %s holding session %s, which undoes the changes of the reply to request %d and writes the next request\n", h.Holder, h.Session, h.Sequence)
	}
	return err
}

type logOptions struct {
	g            *globals
	id           string
	json, output bool
}

func newLogCmd(g *globals, runF func(*logOptions) error) *cobra.Command {
	o := &logOptions{g: g}
	cmd := &cobra.Command{
		Use:   "log [ID]",
		Short: "List a session's turns: each command and how it ended, and the files each turn changed",
		Long: `List the turns of the session ID (default: the most recently updated): each
command of the reply, marked ✗ when it failed, and the files the turn
changed, each once (--json also says which command changed what). --output
adds what each command printed, as the LLM got it (cut to max_output).`,
		Example: `  courier log
  courier log --output
  courier log 3f9a1c2e --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, logRun),
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&o.output, "output", false, "show what each command printed")
	return cmd
}

func logRun(o *logOptions) error {
	b, err := o.g.runner(view{})
	if err != nil {
		return err
	}
	info, turns, err := b.Log(o.id)
	if err != nil {
		return err
	}
	if o.json {
		if turns == nil {
			turns = []history.TurnLog{}
		}
		return writeJSON(o.g.io.Out, turns)
	}
	w := o.g.io.Out
	fmt.Fprintf(w, "Session %s: %s\n", info.ID, termtext.Safe(human.FirstLine(info.Task, 80)))
	if len(turns) == 0 {
		fmt.Fprintln(w, "No replies applied yet.")
	}
	for _, t := range turns {
		printTurn(w, t, o.output)
	}
	return nil
}

// printTurn writes one turn of the log: its reply, each command and how
// it ended (with output, what it printed), and the paths it changed.
func printTurn(w io.Writer, t history.TurnLog, output bool) {
	var marks []string
	for i, on := range []bool{t.Undone, !t.Finished, t.Pruned} {
		if on {
			marks = append(marks, []string{"undone", "unfinished", "snapshot dropped: not undoable"}[i])
		}
	}
	mark := ""
	if len(marks) > 0 {
		mark = " [" + strings.Join(marks, ", ") + "]"
	}
	fmt.Fprintf(w, "request %d  %s  %s  %s, %d failed%s\n", t.Sequence,
		t.AppliedAt.Local().Format("2006-01-02 15:04:05"), termtext.Safe(t.Reply), human.Count(t.Commands, "command", ""), t.Failed, mark)
	for _, r := range t.Results {
		ok := "✓"
		if !r.Success() {
			ok = "✗"
		}
		fmt.Fprintf(w, "  %s %s\n", ok, termtext.Safe(console.Describe(command.Command{Type: r.Type, Path: r.Path, Command: r.Command}, r)))
		if output && r.Type == command.RunCommand {
			fmt.Fprint(w, console.Tail(r.Output, math.MaxInt))
		}
	}
	if t.Changed != "" {
		fmt.Fprintf(w, "  files %s\n", termtext.Safe(t.Changed))
	}
}
