package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/console"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/termtext"
)

// statusText is how status and sessions word a session's state.
func statusText(i runner.Info) string {
	switch i.State {
	case runner.StateUndoing:
		return "undo interrupted (run 'courier undo' or 'courier process' to finish it)"
	case runner.StateComplete:
		return "complete"
	case runner.StateAwaitingApproval:
		return "awaiting approval"
	case runner.StateApplying:
		switch {
		case i.Holder != nil && i.Run:
			return "running"
		case i.Holder != nil:
			return "applying a reply"
		case i.Run:
			return fmt.Sprintf("interrupted (run 'courier ops resume %s' to finish)", i.ID)
		}
		return "interrupted (run 'courier process' to finish)"
	}
	if i.Run {
		// A run's one turn never began: its operations could not even be
		// journaled (a full disk); nothing of it ran.
		return "never began (send its operations again)"
	}
	return "waiting for reply"
}

type statusOptions struct {
	g    *globals
	id   string
	json bool
}

func newStatusCmd(g *globals, runF func(*statusOptions) error) *cobra.Command {
	o := &statusOptions{g: g}
	cmd := &cobra.Command{
		Use:   "status [ID]",
		Short: "Show where a session stands",
		Long: `Show where the session ID (default: the most recently updated one) stands:
waiting for a reply, awaiting approval, applying a reply, or complete, and
which courier process works on it now and what it waits for. With --json,
"state" is one of waiting, awaiting_approval, applying, complete.`,
		Example: `  courier status
  courier status 3f9a1c2e --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, statusRun),
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	return cmd
}

func statusRun(o *statusOptions) error {
	b, err := o.g.runner(view{})
	if err != nil {
		return err
	}
	info, err := b.Status(o.id)
	if err != nil {
		return err
	}
	if info.Run && info.PendingCommand != nil {
		info.Operation = agentspaces.ApprovalID(*info.PendingCommand, info.Pending.Index)
	}
	if o.json {
		return writeJSON(o.g.io.Out, info)
	}
	w := stepsWriter{o.g.io.Out, o.g}
	fmt.Fprintf(w, "Session:   %s\nTask:      %s\nStatus:    %s\nRequest:   %d\n",
		info.ID, termtext.Safe(human.FirstLine(info.Task, 100)), statusText(info), info.Sequence)
	if info.Request != "" {
		fmt.Fprintf(w, "Outbox:    %s\n", b.text.Rel(info.Request))
	}
	fmt.Fprintf(w, "Workspace: %s\nUpdated:   %s\n", termtext.Safe(info.Workspace), info.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	if h := info.Holder; h != nil {
		fmt.Fprintf(w, "Held by:   %s\n", termtext.Safe(h.String()))
	}
	if p := info.Pending; p != nil {
		fmt.Fprintf(w, "Waiting:   approval of %s (%s)\n", termtext.Command(p.Command, p.Env), termtext.Safe(p.Reason))
		op, shown := info.Operation, plainWord(info.Operation)
		switch {
		case info.Run && shown:
			// A run is answered by operation id, with the ops commands.
			fmt.Fprintf(w, "           run 'courier ops resume %s --approve %s' or '--deny %s'\n", info.ID, op, op)
		case info.Run:
			fmt.Fprintf(w, "           run 'courier ops resume %s' with --approve or --deny and the operation's id (its approvalRequired event names it)\n", info.ID)
		default:
			fmt.Fprintf(w, "           run 'courier approve %s' or 'courier deny %s'\n", info.ID, info.ID)
			if p.Covers != "" {
				fmt.Fprintf(w, "           ('courier approve --all %s' also runs, without asking, %s)\n", info.ID, termtext.Safe(p.Covers))
			}
		}
	}
	if info.Summary != "" {
		fmt.Fprintf(w, "Summary:   %s\n", termtext.Safe(strings.ReplaceAll(strings.TrimSpace(info.Summary), "\n", "\n           ")))
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// plainWord reports whether an operation id, written by the program that
// sent it, is a short plain word that can be offered in a command line
// (not "x; rm -rf ~", nor characters a terminal hides).
func plainWord(id string) bool {
	return id != "" && len(id) <= 80 && strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

type showOptions struct {
	g    *globals
	id   string
	full bool
}

func newShowCmd(g *globals, runF func(*showOptions) error) *cobra.Command {
	o := &showOptions{g: g}
	cmd := &cobra.Command{
		Use:   "show [ID]",
		Short: "Print the session's current outbox, e.g. to pipe it into a clipboard tool",
		Long: `Print the current request of the session ID (default: the most recently
updated one), exactly as written, for a clipboard tool; for a complete
session, its last request. On a terminal, control characters from command
output are shown visibly. With --full the request carries the whole
protocol (where protocol = "first" put a short reminder) and the machine's
description, for pasting into a fresh chat; the session is not changed.
show only reads: a missing outbox file is rendered afresh without running
anything.`,
		Example: `  courier show | xclip -selection clipboard
  courier show 3f9a1c2e | pbcopy
  courier show --full`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, showRun),
	}
	cmd.Flags().BoolVar(&o.full, "full", false, "with the whole protocol and the machine's description, for a fresh chat")
	return cmd
}

func showRun(o *showOptions) error {
	b, err := o.g.runner(view{})
	if err != nil {
		return err
	}
	text, err := b.RequestText(o.id, o.full)
	if err != nil {
		return err
	}
	if o.g.io.OutTerminal {
		text = termtext.Safe(text)
	}
	_, err = io.WriteString(o.g.io.Out, text)
	return err
}

type sessionsOptions struct {
	g    *globals
	json bool
}

func newSessionsCmd(g *globals, runF func(*sessionsOptions) error) *cobra.Command {
	o := &sessionsOptions{g: g}
	cmd := &cobra.Command{
		Use:     "sessions",
		Short:   "List the sessions, most recently updated first",
		Example: `  courier sessions --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(runF, sessionsRun, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	return cmd
}

func sessionsRun(o *sessionsOptions) error {
	b, err := o.g.runner(view{})
	if err != nil {
		return err
	}
	infos, errs := b.Sessions()
	for _, e := range errs {
		b.text.Warn(termtext.Safe(e.Error()), "")
	}
	if o.json {
		return writeJSON(o.g.io.Out, infos)
	}
	if len(infos) == 0 {
		fmt.Fprintln(o.g.io.Out, `No sessions yet; start one with: courier new "TASK"`)
		return nil
	}
	tw := tabwriter.NewWriter(o.g.io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tREQUEST\tSTATUS\tUPDATED\tTASK")
	for _, i := range infos {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", i.ID, i.Sequence, statusText(i), i.UpdatedAt.Local().Format("2006-01-02 15:04"), termtext.Safe(human.FirstLine(i.Task, 50)))
	}
	return tw.Flush()
}

type parseOptions struct {
	g              *globals
	file, protocol string
	json           bool
}

func newParseCmd(g *globals, runF func(*parseOptions) error) *cobra.Command {
	o := &parseOptions{g: g}
	cmd := &cobra.Command{
		Use:   "parse FILE",
		Short: "Show the commands a reply contains, without running anything",
		Long: `Read the reply FILE as courier would (the same size limit, decoding and
checks) and show the commands it holds, without running anything. The
reply is read in the protocol of the session it names (its header, or its
file name), as 'courier process' would read it; --protocol chooses one.`,
		Example: `  courier parse inbox/answer.txt
  courier parse --protocol json inbox/answer.md
  courier parse --json inbox/answer.txt | jq '.[].type'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			if o.protocol != "" && !slices.Contains(protocolNames(), o.protocol) {
				return usage(withHint(fmt.Errorf("unknown protocol %q", o.protocol), "--protocol "+strings.Join(protocolNames(), " or ")))
			}
			return run(runF, parseRun, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the commands as a JSON array")
	cmd.Flags().StringVar(&o.protocol, "protocol", "", "read the reply in this protocol: "+strings.Join(protocolNames(), " or ")+" (default: the protocol of the session it names, else tags)")
	_ = cmd.RegisterFlagCompletionFunc("protocol", cobra.FixedCompletions(protocolNames(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func parseRun(o *parseOptions) error {
	fes := frontEnds()
	rep, err := reply.Read(o.file, o.file, o.g.cfg.MaxReply, fes[0])
	if err != nil {
		return err
	}
	name := o.protocol
	if name == "" {
		name = o.g.replyProtocol(rep, fes)
	}
	for _, fe := range fes {
		if fe.Name() == name {
			rep = rep.For(fe)
		}
	}
	cmds := rep.Parsed.Commands
	if cmds == nil {
		cmds = []command.Command{}
	}
	w := o.g.io.Out
	if o.json {
		return writeJSON(w, cmds)
	}
	if rep.Parsed.Session != "" {
		fmt.Fprintf(w, "Session: %s  Sequence: %d\n", rep.Parsed.Session, rep.Parsed.Sequence)
	}
	if len(cmds) == 0 {
		fmt.Fprintln(w, "No commands found.")
		if o.protocol == "" && name == fes[0].Name() {
			fmt.Fprintf(o.g.io.Err, "courier: hint: it was read as the %s protocol; give --protocol to read it in another (%s)\n", name, strings.Join(protocolNames(), " or "))
		}
		return nil
	}
	for i, c := range cmds {
		fmt.Fprintf(w, "%d. %s\n", i+1, termtext.Safe(parseLine(c)))
		if c.Note != "" {
			fmt.Fprintf(w, "   %s\n", termtext.Safe(c.Note))
		}
	}
	return nil
}

// replyProtocol is the protocol of the session a reply names, if it
// exists; else the default.
func (g *globals) replyProtocol(rep reply.Reply, fes []frontend.FrontEnd) string {
	id := rep.Route(fes...)
	if id == "" {
		return fes[0].Name()
	}
	b, err := g.runner(view{})
	if err != nil {
		return fes[0].Name()
	}
	info, err := b.Status(id)
	if err != nil || info.Protocol == "" {
		return fes[0].Name()
	}
	return info.Protocol
}

// parseLine describes a parsed command on one line.
func parseLine(c command.Command) string {
	at := fmt.Sprintf(" (line %d)", c.Line)
	switch c.Type {
	case command.CreateFile:
		return fmt.Sprintf("CREATE_FILE %s: %s%s", c.Path, human.Count(human.Lines(c.Content), "line", ""), at)
	case command.EditFile:
		if len(c.Edits) > 0 {
			return fmt.Sprintf("EDIT_FILE %s: %s%s", c.Path, human.Count(len(c.Edits), "search/replace edit", ""), at)
		}
		return fmt.Sprintf("EDIT_FILE %s: lines %d-%d%s", c.Path, c.StartLine, c.EndLine, at)
	case command.DeleteFile, command.ReadFile:
		s := fmt.Sprintf("%s %s", c.Type, c.Path)
		if c.StartLine != 0 || c.EndLine != 0 {
			s += fmt.Sprintf(" lines %d-%d", c.StartLine, c.EndLine)
		}
		return s + at
	case command.RunCommand:
		return "RUN_COMMAND " + human.FirstLine(c.Command, 70) + at
	case command.Message, command.Done:
		return fmt.Sprintf("%s %s%s", c.Type, human.FirstLine(c.Text, 70), at)
	case command.ParseError:
		return fmt.Sprintf("PARSE_ERROR%s: %s", at, c.Error)
	}
	return string(c.Type) + at
}

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
