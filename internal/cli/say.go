package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/runner"
)

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
// that is the id of a session names it; any other, even one shaped like an
// id ("cafebabe is the magic number"), is text.
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
	handed, err := b.Decide(o.ctx, o.id, d, inbox.NewQueue(b.Paths().Inbox, o.g.cfg.MaxReply).Source("", false))
	if handed {
		verb := "denial"
		if o.approve {
			verb = "approval"
		}
		fmt.Fprintf(o.g.io.Out, "Gave the %s to the courier process waiting for it; it goes on there\n", verb)
	}
	return err
}
