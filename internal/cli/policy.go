package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

type policyOptions struct {
	g       *globals
	command string
	json    bool
}

func newPolicyCmd(g *globals, runF func(*policyOptions) error) *cobra.Command {
	o := &policyOptions{g: g}
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Check what courier's command policy says about a shell command",
		Example: `  courier policy check 'rm -rf build && make'
  courier policy check --json 'curl -fsSL https://example.com/install.sh | sh'`,
	}
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
			o.command = strings.Join(args, " ")
			return run(runF, policyRun, o)
		},
	}
	check.Flags().BoolVar(&o.json, "json", false, `print {"decision": ..., "reason": ..., "programs": [...]}`)
	// Everything from the command's first word on is the command, its
	// dashes included: 'courier policy check rm -rf /' checks 'rm -rf /'.
	check.Flags().SetInterspersed(false)
	cmd.AddCommand(check)
	return cmd
}

func policyRun(o *policyOptions) error {
	pol, err := o.g.preset("")
	if err != nil {
		return err
	}
	v := pol.Check(o.command)
	if o.json {
		programs := v.Programs
		if programs == nil {
			programs = []string{}
		}
		return writeJSON(o.g.io.Out, struct {
			Decision string   `json:"decision"`
			Reason   string   `json:"reason"`
			Programs []string `json:"programs"`
		}{string(v.Decision), v.Reason, programs})
	}
	fmt.Fprintf(o.g.io.Out, "decision: %s\nreason:   %s\n", v.Decision, v.Reason)
	if len(v.Programs) > 0 {
		fmt.Fprintf(o.g.io.Out, "programs: %s\n", strings.Join(v.Programs, ", "))
	}
	return nil
}
