package cli

import (
	"io"
	"strings"

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

// plainBash makes 'courier completion bash' work in a plain bash too:
// cobra's script needs two functions of the bash-completion package,
// which is not everywhere; the script now brings its own when they are
// missing.
func plainBash(root *cobra.Command) {
	c, _, err := root.Find([]string{"completion", "bash"})
	if err != nil || c.Name() != "bash" {
		return
	}
	c.Long = strings.Replace(c.Long, "This script depends on the 'bash-completion' package.\nIf it is not installed already, you can install it via your OS's package manager.\n",
		"It works in a plain bash, and with the bash-completion package.\n", 1)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		noDesc, _ := cmd.Flags().GetBool("no-descriptions")
		if _, err := io.WriteString(cmd.OutOrStdout(), bashBasics); err != nil {
			return err
		}
		return cmd.Root().GenBashCompletionV2(cmd.OutOrStdout(), !noDesc)
	}
}

// bashBasics are the bash-completion package's functions cobra's script
// uses, in brief, for a bash without it: the words up to the cursor,
// split at blanks only, and file and folder names.
const bashBasics = `# Without the bash-completion package, the two of its functions this
# script uses, in brief.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref() {
    local line=${COMP_LINE:0:COMP_POINT}
    read -ra words <<<"$line"
    if [[ ${#words[@]} -eq 0 || $line == *[[:blank:]] ]]; then
        words+=("")
    fi
    cword=$((${#words[@]} - 1))
    cur=${words[cword]}
    prev=${words[cword > 0 ? cword - 1 : 0]}
}
fi
if ! declare -F _filedir >/dev/null 2>&1; then
_filedir() {
    local kind=-f
    [[ ${1-} == -d ]] && kind=-d
    mapfile -t COMPREPLY < <(compgen "$kind" -- "$cur")
}
fi

`
