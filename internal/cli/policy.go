package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newPolicyCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Check what courier's command policy says about a shell command",
		Example: `  courier policy check 'rm -rf build && make'
  courier policy check --json 'curl -fsSL https://example.com/install.sh | sh'`,
	}
	var asJSON bool
	check := &cobra.Command{
		Use:   "check COMMAND...",
		Short: "Print the decision (allow, ask or deny) and its reason for a command",
		Long: `Print what courier would do with a RUN_COMMAND: allow it, ask for your
approval first, or deny it, and why. Everything from the command's first
word on is the command, its flags included (rm -rf / needs no quoting);
the words are joined with spaces, so quote the command to keep its own
quoting. Flags of 'check' itself (--json) go before the command.`,
		Example: `  courier policy check 'git push origin main'
  courier policy check rm -rf build
  courier policy check --json 'sudo make install'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pol, err := g.policy()
			if err != nil {
				return err
			}
			v := pol.Check(strings.Join(args, " "))
			if asJSON {
				programs := v.Programs
				if programs == nil {
					programs = []string{}
				}
				return writeJSON(g.io.Out, struct {
					Decision string   `json:"decision"`
					Reason   string   `json:"reason"`
					Programs []string `json:"programs"`
				}{string(v.Decision), v.Reason, programs})
			}
			fmt.Fprintf(g.io.Out, "decision: %s\nreason:   %s\n", v.Decision, v.Reason)
			if len(v.Programs) > 0 {
				fmt.Fprintf(g.io.Out, "programs: %s\n", strings.Join(v.Programs, ", "))
			}
			return nil
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, `print {"decision": ..., "reason": ..., "programs": [...]}`)
	// Everything from the command's first word on is the command, its
	// dashes included: 'courier policy check rm -rf /' checks 'rm -rf /'.
	check.Flags().SetInterspersed(false)
	cmd.AddCommand(check)
	return cmd
}
