package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/runner"
)

func newSayCmd(g *globals) *cobra.Command {
	var newChat bool
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
			nothing := usage(withHint(fmt.Errorf("nothing to say"), `courier say "TEXT", or courier say --new-chat`))
			if len(args) == 0 && !newChat {
				return nothing
			}
			b, err := g.runner(view{use: writing})
			if err != nil {
				return err
			}
			id, words := sessionAndText(b, args)
			if len(words) == 0 && !newChat {
				return nothing
			}
			said, err := b.Say(id, strings.Join(words, " "), newChat)
			if err != nil {
				return err
			}
			switch {
			case said.Holder != "" && said.Heard:
				fmt.Fprintf(g.io.Out, "Gave the message to the %s holding session %s, which wrote the request again: paste it again\n", said.Holder, said.Session)
			case said.Holder != "":
				fmt.Fprintf(g.io.Out, "Left the message for the %s holding session %s: it goes into the next request written\n", said.Holder, said.Session)
			case !said.Rewritten:
				fmt.Fprintf(g.io.Out, "The message goes into the request after request %d, whose reply is being applied\n", said.Sequence)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&newChat, "new-chat", false, "put the full protocol and the machine's description in the request again, for a fresh chat")
	return cmd
}

func newContinueCmd(g *globals) *cobra.Command {
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
			b, err := g.runner(view{use: writing, json: o.watch.json, wait: runner.Later})
			if err != nil {
				return err
			}
			id, words := sessionAndText(b, args)
			if len(words) == 0 {
				return usage(withHint(fmt.Errorf("no follow-up task"), `courier continue ID "TASK"`))
			}
			id, err = b.Continue(id, strings.Join(words, " "))
			if err != nil {
				return err
			}
			if o.noWatch {
				return nil
			}
			return watch(cmd.Context(), b, &watchOptions{g: g, id: id, flags: o.watch})
		},
	}
	cmd.Flags().BoolVar(&o.noWatch, "no-watch", false, "exit after writing the request")
	o.watch.register(cmd)
	return cmd
}

// sessionAndText splits the arguments of say and continue: a first word
// that is the id of a session names it; any other, even one shaped like an
// id ("cafebabe is the magic number"), is text.
func sessionAndText(b *built, args []string) (string, []string) {
	if len(args) > 0 && runner.ValidID(args[0]) {
		if _, err := b.Status(args[0]); !errors.Is(err, runner.ErrNotFound) {
			return args[0], args[1:]
		}
	}
	return "", args
}
