package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runner"
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
	if out.Len() == 0 {
		which := "the last reply applied"
		if o.seq > 0 {
			which = fmt.Sprintf("the reply to request %d", o.seq)
		}
		_, err = fmt.Fprintf(o.g.io.Out, "No change: %s changed nothing in the workspace\n", which)
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
		if code != "" {
			body, nl := strings.CutSuffix(l, "\n")
			lines[i] = code + body + "\x1b[0m"
			if nl {
				lines[i] += "\n"
			}
		}
	}
	return strings.Join(lines, "")
}

// sessionAndTurn reads [ID] [TURN]: a session id, a request number, both
// or neither.
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
	removed, err := removeFinishedLayers(b.Runner, b.Paths())
	if removed > 0 {
		fmt.Fprintf(o.g.io.Out, "Removed the cache layers of %d finished sessions\n", removed)
	}
	return err
}

// removeFinishedLayers removes the cache layers of the sessions that are
// complete or gone, and says how many it removed.
func removeFinishedLayers(r *runner.Runner, p runner.Paths) (int, error) {
	caches := filepath.Join(p.Root, "cache")
	removed := 0
	for _, id := range sandbox.LayerSessions(caches) {
		if _, err := os.Stat(history.Store{Dir: p.Sessions}.Folder(id)); err == nil {
			if info, err := r.Status(id); err != nil || !info.Complete {
				continue // a session going on keeps its layer
			}
		}
		if err := sandbox.RemoveLayer(caches, id); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, nil
}
