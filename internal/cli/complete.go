package cli

import (
	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/human"
)

// Shell completion: session ids (with their task) for the commands that
// take one, and the values of the settings that have a fixed set.

// sessionArgs completes a command's first argument with the session ids.
func (g *globals) sessionArgs(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	// Completion runs the command's pre-run hooks only in part: the
	// settings are loaded here.
	if g.cfg == nil {
		if err := g.configure(); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
	b, err := g.runner(view{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	infos, _ := b.Sessions()
	out := make([]string, 0, len(infos))
	for _, i := range infos {
		out = append(out, i.ID+"\t"+human.FirstLine(i.Task, 60))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeSessions adds session-id completion to the commands that take an
// id as their first argument.
func (g *globals) completeSessions(cmds ...*cobra.Command) {
	for _, c := range cmds {
		c.ValidArgsFunction = g.sessionArgs
	}
}

// completeSettings completes the flags of settings with a fixed set of
// values (color, sandbox, protocol, the agent's name).
func completeSettings(root *cobra.Command) {
	for _, s := range config.Settings() {
		values := s.Values
		if s.Key == "agent.name" {
			values = agent.Names()
		}
		if s.Flag == "" || len(values) == 0 {
			continue
		}
		_ = root.RegisterFlagCompletionFunc(s.Flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
}
