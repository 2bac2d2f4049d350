package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/agentrun"
	"github.com/courier-agent/courier/internal/clipboard"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
)

// eventsFlag is --json of the commands that report a turn's events.
func eventsFlag(cmd *cobra.Command, p *bool) {
	cmd.Flags().BoolVar(p, "json", false, "print one JSON object per event instead of text")
}

type watchOptions struct {
	g    *globals
	ctx  context.Context
	id   string
	json bool
}

func newWatchCmd(g *globals, runF func(*watchOptions) error) *cobra.Command {
	o := &watchOptions{g: g}
	cmd := &cobra.Command{
		Use:     "watch [ID]",
		Aliases: []string{"resume"},
		Short:   "Resume a session and apply each reply saved into inbox/",
		Long: `Resume the session ID (default: the most recently updated incomplete one),
rewrite its current outbox if it is missing, and wait for replies in inbox/.
Each reply is applied and the next outbox written, until the LLM sends DONE.
Ctrl-C stops cleanly; run 'courier watch' again to go on.`,
		Example: `  courier watch
  courier resume 3f9a1c2e --poll`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, &o.ctx, runF, watchRun),
	}
	eventsFlag(cmd, &o.json)
	return cmd
}

func watchRun(o *watchOptions) error {
	b, err := o.g.runner(view{use: writing, json: o.json, wait: runner.Later})
	if err != nil {
		return err
	}
	return o.g.watch(o.ctx, b, o.id)
}

// watch serves a session from the inbox (and the clipboard) until it is
// complete, a question stops it, or Ctrl-C.
func (g *globals) watch(ctx context.Context, b *built, id string) error {
	s, err := b.Hold(id, "courier watch")
	if err != nil {
		return err
	}
	defer s.Release()
	if s.Complete() {
		fmt.Fprintf(g.io.Out, "Session %s is already complete.\n", s.ID())
		return nil
	}
	if g.agentChosen() {
		src, err := g.agentSource(b, s)
		if err != nil {
			return err
		}
		return s.Serve(ctx, src)
	}
	warn := func(msg string) { b.cfg.Reporter.Warning(runner.Warning{Message: msg}) }
	var src runner.Source = inbox.NewWatcher(b.Paths().Inbox, s.ID(), inbox.WatchOptions{
		Poll: g.cfg.Poll, Settle: g.cfg.Settle, MaxReply: g.cfg.MaxReply, Warn: warn})
	if g.cfg.Clipboard {
		if cb, err := clipboard.Detect(g.io.Environ); err != nil {
			b.cfg.Reporter.Warning(noClipboard(err))
		} else {
			src = runner.Either(src, clipboard.NewSource(cb, b.Paths().Inbox+"/processed"))
		}
	}
	return s.Serve(ctx, src)
}

// agentSource returns the agent the settings choose as the session's source.
func (g *globals) agentSource(b *built, s *runner.Session) (*agentrun.Source, error) {
	spec := g.cfg.AgentSpec()
	spec.Getenv = g.io.Getenv
	a, err := agent.New(spec)
	if err != nil {
		return nil, err
	}
	return agentrun.New(agentrun.Options{
		Agent:      a,
		Model:      spec.Model,
		SessionDir: s.Folder(),
		Workspace:  s.Workspace(),
		MaxTurns:   g.cfg.Agent.MaxTurns,
		Restarts:   agent.RestartPolicy{MaxRestarts: g.cfg.Agent.MaxRestarts, Pause: g.cfg.Agent.RestartPause},
		TimeBudget: g.cfg.Agent.TimeBudget,
		Reporter:   b.cfg.Reporter,
	}), nil
}

type processOptions struct {
	g       *globals
	ctx     context.Context
	file    string
	session string
	json    bool
}

func newProcessCmd(g *globals, runF func(*processOptions) error) *cobra.Command {
	o := &processOptions{g: g}
	cmd := &cobra.Command{
		Use:   "process [FILE]",
		Short: "Apply one reply (or the replies waiting in inbox/) and exit",
		Long: `Apply the reply FILE to its session (the one it names, --session, or the
most recently updated incomplete one), write the next outbox, print the
result of each command and exit. Without FILE, finish any turn that was
interrupted and apply the replies waiting in inbox/, oldest first.
A reply whose commands failed still counts as applied: the failures go to
the LLM in the next outbox.`,
		Example: `  courier process inbox/answer.txt
  courier process --session 3f9a1c2e ~/Downloads/reply.md
  courier process`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.file, &o.ctx, runF, processRun),
	}
	cmd.Flags().StringVar(&o.session, "session", "", "apply to this session instead of the one the reply names")
	eventsFlag(cmd, &o.json)
	return cmd
}

func processRun(o *processOptions) error {
	b, err := o.g.runner(view{use: writing, json: o.json, wait: runner.Stop})
	if err != nil {
		return err
	}
	if o.file != "" {
		return b.ApplyFrom(o.ctx, &inbox.File{Path: o.file, Inbox: b.Paths().Inbox, MaxReply: o.g.cfg.MaxReply}, o.session, "courier process")
	}
	q := inbox.Queue{Dir: b.Paths().Inbox, MaxReply: o.g.cfg.MaxReply}
	waiting, err := inbox.Pending(q.Dir)
	if err != nil {
		return err
	}
	if err := b.ProcessQueue(o.ctx, q, "courier process"); err != nil {
		return err
	}
	if len(waiting) == 0 && b.text != nil {
		fmt.Fprintf(o.g.io.Out, "No replies waiting in %s/\n", b.text.Rel(q.Dir))
	}
	return nil
}

// newOptions are those of new and continue.
type newOptions struct {
	g             *globals
	ctx           context.Context
	words         []string // the task; continue's may begin with an id
	noWatch, json bool
	includes      []string
	protocol      string
}

func newNewCmd(g *globals, runF func(*newOptions) error) *cobra.Command {
	o := &newOptions{g: g}
	cmd := &cobra.Command{
		Use:   "new TASK...",
		Short: "Start a session: write the first request and wait for the reply",
		Long: `Start a session for TASK: courier writes outbox/<id>_seq0001.txt, prints the
session id and the outbox path, and then watches inbox/ for the reply, as
'courier watch' does. With --no-watch it exits right after writing the outbox.`,
		Example: `  courier new "write a Python script that counts words in a file"
  courier new --no-watch --include 'src/*.go' "add input validation to the parser"
  courier new --protocol json "add a --json flag to the report command"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(protocolNames(), o.protocol) {
				return usage(withHint(fmt.Errorf("unknown protocol %q", o.protocol), "--protocol "+strings.Join(protocolNames(), " or ")))
			}
			o.ctx, o.words = cmd.Context(), args
			return run(runF, newRun, o)
		},
	}
	cmd.Flags().BoolVar(&o.noWatch, "no-watch", false, "exit after writing the first outbox")
	cmd.Flags().StringArrayVar(&o.includes, "include", nil, "pack the files matching GLOB into the first request (repeatable)")
	cmd.Flags().StringVar(&o.protocol, "protocol", protocol.TagsName, "how the LLM answers: tags ([COMMAND] blocks) or json (Agent Spaces operations messages)")
	_ = cmd.RegisterFlagCompletionFunc("protocol", cobra.FixedCompletions(protocolNames(), cobra.ShellCompDirectiveNoFileComp))
	eventsFlag(cmd, &o.json)
	return cmd
}

func newRun(o *newOptions) error {
	b, err := o.g.runner(view{use: starting, json: o.json, wait: runner.Later})
	if err != nil {
		return err
	}
	id, err := b.Create(strings.Join(o.words, " "), runner.CreateOptions{Includes: o.includes, Protocol: o.protocol, SnapshotLater: o.noWatch})
	if err != nil {
		return err
	}
	if o.noWatch {
		if b.text != nil {
			fmt.Fprintf(stepsWriter{o.g.io.Out, o.g}, "Then run 'courier watch %s' (or 'courier process' once the answer is saved).\n", id)
		}
		return nil
	}
	return o.g.watch(o.ctx, b, id)
}

type pasteOptions struct {
	g  *globals
	id string
}

func newPasteCmd(g *globals, runF func(*pasteOptions) error) *cobra.Command {
	o := &pasteOptions{g: g}
	return &cobra.Command{
		Use:   "paste [ID]",
		Short: "Save the clipboard's text into inbox/ as the reply of a session",
		Long: `Save the text on the clipboard (the LLM's answer you copied from the chat)
into inbox/, named so that it goes to the session ID (default: the most
recently updated incomplete one). A running 'courier watch' applies it; or
run 'courier process'.`,
		Example: `  courier paste
  courier paste 3f9a1c2e && courier process`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, pasteRun),
	}
}

func pasteRun(o *pasteOptions) error {
	b, err := o.g.runner(view{use: writing})
	if err != nil {
		return err
	}
	info, err := b.Status(o.id)
	if err != nil {
		return err
	}
	if info.Complete && o.id == "" {
		return withHint(fmt.Errorf("session %s is complete", info.ID), "name the session to paste for")
	}
	cb, err := clipboard.Detect(o.g.io.Environ)
	if err != nil {
		return withHint(err, fmt.Sprintf("save the answer into %s/ by hand instead", b.text.Rel(b.Paths().Inbox)))
	}
	text, err := cb.Paste()
	if err != nil && !errors.Is(err, clipboard.ErrEmpty) {
		return fmt.Errorf("read the clipboard: %w", err)
	}
	if strings.TrimSpace(text) == "" {
		return withHint(errors.New("the clipboard is empty"), "copy the LLM's answer in the chat first")
	}
	fe, err := b.FrontEnd(info.Protocol)
	if err != nil {
		return err
	}
	// Read as every reply is, so that what is saved is what processing it
	// will accept.
	rep, err := reply.New("on the clipboard", text, o.g.cfg.MaxReply, fe)
	if errors.As(err, new(*reply.EchoError)) {
		return withHint(errors.New("the clipboard holds courier's request, not the LLM's answer"),
			"paste it into the chat, then copy the chat's answer and run 'courier paste' again")
	} else if err != nil {
		return err
	}
	p, err := inbox.Save(b.Paths().Inbox, info.ID, text, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(o.g.io.Out, "Saved the clipboard (%d bytes) as %s for session %s\n", len(text), b.text.Rel(p), info.ID)
	if len(rep.Parsed.Commands) == 0 {
		b.cfg.Reporter.Warning(runner.Warning{Message: "the text holds no command blocks; the LLM will be told so"})
	}
	return nil

}

type sayOptions struct {
	g       *globals
	words   []string // the text, which may begin with an id
	newChat bool
}

func newSayCmd(g *globals, runF func(*sayOptions) error) *cobra.Command {
	o := &sayOptions{g: g}
	cmd := &cobra.Command{
		Use:   "say [ID] TEXT...",
		Short: "Add your words to the next request: an answer, a correction, a hint",
		Long: `Add TEXT to the next request of the session ID (default: the most recently
updated incomplete one), under "Message from the user", above the results:
to answer the LLM's MESSAGE, correct its course, or give a hint. When the
current request has not been answered yet, it is written again with the
message: paste it again. While a reply is being applied, or a command
waits for approval, the message goes into the request that turn ends
with. When 'courier watch' holds the session in another terminal, the
message is given to it and it writes the request. With --new-chat the
request also carries the full protocol and the machine's description
again, for a fresh chat.`,
		Example: `  courier say "use the standard library's difflib, not a new dependency"
  courier say 3f9a1c2e "the tests live in tests/, not test/"
  courier say --new-chat`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !o.newChat {
				return nothingToSay()
			}
			o.words = args
			return run(runF, sayRun, o)
		},
	}
	cmd.Flags().BoolVar(&o.newChat, "new-chat", false, "put the full protocol and the machine's description in the request again, for a fresh chat")
	return cmd
}

func nothingToSay() error {
	return usage(withHint(errors.New("nothing to say"), `courier say "TEXT", or courier say --new-chat`))
}

func sayRun(o *sayOptions) error {
	b, err := o.g.runner(view{use: writing})
	if err != nil {
		return err
	}
	id, words := sessionAndText(b, o.words)
	if len(words) == 0 && !o.newChat {
		return nothingToSay()
	}
	said, err := b.Say(id, strings.Join(words, " "), o.newChat)
	if err != nil {
		return err
	}
	out := o.g.io.Out
	switch {
	case said.Holder != "" && said.Heard:
		fmt.Fprintf(out, "Gave the message to the %s holding session %s, which wrote the request again: paste it again\n", said.Holder, said.Session)
	case said.Holder != "":
		fmt.Fprintf(out, "Left the message for the %s holding session %s: it goes into the next request written\n", said.Holder, said.Session)
	case !said.Rewritten:
		fmt.Fprintf(out, "The message goes into the request after request %d, whose reply is being applied\n", said.Sequence)
	}
	return nil
}

func newContinueCmd(g *globals, runF func(*newOptions) error) *cobra.Command {
	o := &newOptions{g: g}
	cmd := &cobra.Command{
		Use:   "continue [ID] TASK...",
		Short: "Reopen a complete session with a follow-up task",
		Long: `Reopen the complete session ID (default: the most recently updated one)
with a follow-up task: the same workspace, the next request, the new task
in its PROMPT and in the HEADER's task history. Then watch for replies, as
'courier new' does (--no-watch to exit at once).`,
		Example: `  courier continue "now add a --json flag"
  courier continue 3f9a1c2e "also update the README"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ctx, o.words = cmd.Context(), args
			return run(runF, continueRun, o)
		},
	}
	cmd.Flags().BoolVar(&o.noWatch, "no-watch", false, "exit after writing the request")
	eventsFlag(cmd, &o.json)
	return cmd
}

func continueRun(o *newOptions) error {
	b, err := o.g.runner(view{use: writing, json: o.json, wait: runner.Later})
	if err != nil {
		return err
	}
	id, words := sessionAndText(b, o.words)
	if len(words) == 0 {
		return usage(withHint(errors.New("no follow-up task"), `courier continue ID "TASK"`))
	}
	if id, err = b.Continue(id, strings.Join(words, " ")); err != nil || o.noWatch {
		return err
	}
	return o.g.watch(o.ctx, b, id)
}

// sessionAndText splits the arguments of say and continue: a first word
// naming a session that exists is its id; any other is text.
func sessionAndText(b *built, args []string) (string, []string) {
	if len(args) > 0 && history.ValidID(args[0]) {
		if _, err := b.Status(args[0]); !errors.Is(err, history.ErrNotFound) {
			return args[0], args[1:]
		}
	}
	return "", args
}

type decideOptions struct {
	g       *globals
	ctx     context.Context
	id      string
	approve bool
	all     bool
	reason  string
}

func newApproveCmd(g *globals, runF func(*decideOptions) error) *cobra.Command {
	o := &decideOptions{g: g, approve: true}
	cmd := &cobra.Command{
		Use:   "approve [ID]",
		Short: "Run the command a session waits on, and go on with the reply",
		Long: `Approve the command the session is waiting on (see 'courier status'): it
runs, and the rest of the reply is carried out in order. With --all, later
commands like it run without asking for the rest of the session. When a
'courier watch' waits on the question in another terminal, it gets the
answer and goes on by itself.`,
		Example: `  courier approve 3f9a1c2e
  courier approve --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, &o.ctx, runF, decideRun),
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "also approve every later command like it in this session")
	return cmd
}

func newDenyCmd(g *globals, runF func(*decideOptions) error) *cobra.Command {
	o := &decideOptions{g: g}
	cmd := &cobra.Command{
		Use:   "deny [ID]",
		Short: "Refuse the command a session waits on, and go on with the reply",
		Long: `Refuse the command the session is waiting on: it does not run, the LLM is
told (with --reason, why), and the rest of the reply is carried out.`,
		Example: `  courier deny 3f9a1c2e --reason "do not delete the build cache"`,
		Args:    cobra.MaximumNArgs(1),
		RunE:    optional(o, &o.id, &o.ctx, runF, decideRun),
	}
	cmd.Flags().StringVar(&o.reason, "reason", "", "tell the LLM why")
	return cmd
}

func decideRun(o *decideOptions) error {
	b, err := o.g.runner(view{use: writing, wait: runner.Stop})
	if err != nil {
		return err
	}
	d := runner.Decision{Answer: runner.Deny, Reason: o.reason}
	switch {
	case o.approve && o.all:
		d = runner.Decision{Answer: runner.ApproveAll}
	case o.approve:
		d = runner.Decision{Answer: runner.Approve}
	}
	handed, err := b.Decide(o.ctx, o.id, d, inbox.Queue{Dir: b.Paths().Inbox, MaxReply: o.g.cfg.MaxReply}.Source("", false))
	if handed {
		verb := "denial"
		if o.approve {
			verb = "approval"
		}
		fmt.Fprintf(o.g.io.Out, "Gave the %s to the courier process waiting for it; it goes on there\n", verb)
	}
	return err
}
