package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/sandbox"
)

type checkOptions struct {
	g    *globals
	json bool
}

func newSandboxCmd(g *globals, runF func(*checkOptions) error) *cobra.Command {
	o := &checkOptions{g: g}
	cmd := &cobra.Command{
		Use:     "sandbox",
		Short:   "Show how commands are confined",
		Example: "  courier sandbox check",
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "List each layer of the command sandbox as active or missing, and why",
		Long: `List each layer that confines RUN_COMMAND on this machine with the current
settings (sandbox, network, home): active, missing with the reason, or not
used by these settings. It tries the layers for real, as a command would get
them, and always exits 0; with sandbox = "auto" commands run with the layers
that are active, with sandbox = "strict" they are refused while one is
missing.`,
		Example: `  courier sandbox check
  courier --network=false sandbox check --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return run(runF, checkRun, o) },
	}
	check.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	cmd.AddCommand(check)
	return cmd
}

// sandboxReport is what courier sandbox check shows.
type sandboxReport struct {
	Sandbox     string          `json:"sandbox"`
	Unconfined  string          `json:"unconfined,omitempty"`
	Network     bool            `json:"network"`
	Home        string          `json:"home"`
	Layers      []sandbox.Layer `json:"layers"`
	Shown       []string        `json:"shown"`
	Environment commandEnv      `json:"environment"`
}

// commandEnv says which variables commands get: names and globs taken
// from courier's environment, the person's keep_env, those set to
// courier's tool caches, and those always set (NAME=value).
type commandEnv struct {
	Allowed  []string `json:"allowed"`
	KeepEnv  []string `json:"keepEnv"`
	Tools    []string `json:"tools"`
	Defaults []string `json:"defaults"`
}

// sandboxReport probes the kernel for the layers the settings give.
func (g *globals) sandboxReport() (sandboxReport, error) {
	root, err := filepath.Abs(g.rootDir())
	if err != nil {
		return sandboxReport{}, fmt.Errorf("root %s: %w", g.rootDir(), err)
	}
	opts := g.sandboxSettings(runner.DefaultPaths(root))
	opts.Kernel = g.io.Probe(opts.Caches)
	layers := sandbox.Layers(opts)
	if g.cfg.Sandbox == config.SandboxOff {
		for i := range layers {
			layers[i].Active, layers[i].Detail = false, "sandbox = \"off\": commands are not confined"
		}
	}
	return sandboxReport{Sandbox: g.cfg.Sandbox, Unconfined: opts.Kernel.Unconfined, Network: g.cfg.Network, Home: g.cfg.Home, Layers: layers, Shown: opts.Show,
		Environment: commandEnv{Allowed: runner.AllowedVars(), KeepEnv: append([]string{}, g.cfg.KeepEnv...), Tools: sandbox.ToolVars(), Defaults: runner.DefaultVars()}}, nil
}

func checkRun(o *checkOptions) error {
	r, err := o.g.sandboxReport()
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.g.io.Out, r)
	}
	b := o.g.io.Out
	fmt.Fprintf(b, "Command sandbox (sandbox = %q, network = %v, home = %q):\n", r.Sandbox, r.Network, r.Home)
	width := 0
	for _, l := range r.Layers {
		width = max(width, len(l.Name))
	}
	missing := 0
	for _, l := range r.Layers {
		state := "active"
		switch {
		case !l.Needed:
			state = "unused"
		case !l.Active && l.Speed:
			state = "slower"
		case !l.Active:
			state = "MISSING"
			missing++
		}
		fmt.Fprintf(b, "  %-7s  %-*s  %s\n", state, width, l.Name, l.Detail)
	}
	switch {
	case r.Sandbox == config.SandboxOff:
		fmt.Fprintln(b, "Commands run unconfined (sandbox = \"off\").")
	case r.Unconfined != "" && r.Sandbox == config.SandboxAuto && r.Network:
		fmt.Fprintln(b, "Nothing confines commands here: each RUN_COMMAND waits for your yes (sandbox = \"off\" runs them without asking).")
	case r.Unconfined != "":
		fmt.Fprintln(b, "Nothing confines commands here: with these settings each RUN_COMMAND is refused.")
	case missing == 0:
		fmt.Fprintln(b, "Every layer these settings need is active.")
	case r.Sandbox == config.SandboxStrict:
		fmt.Fprintf(b, "%d layers are missing: with sandbox = \"strict\" commands are refused.\n", missing)
	default:
		fmt.Fprintf(b, "%d layers are missing: commands run with the others (sandbox = \"strict\" would refuse them).\n", missing)
	}
	_, err = io.WriteString(b, r.shownText("")+r.Environment.text(""))
	return err
}

// shownText names the person's places commands see read-only.
func (r sandboxReport) shownText(prefix string) string {
	if len(r.Shown) == 0 || r.Sandbox == config.SandboxOff {
		return ""
	}
	return fmt.Sprintf("%sCommands see these of your places read-only (PATH, toolchains, what builds read, read_only): %s\n", prefix, strings.Join(r.Shown, " "))
}

// text describes the environment commands get, each line after prefix.
func (e commandEnv) text(prefix string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%sCommands get these variables of yours: %s\n", prefix, strings.Join(e.Allowed, " "))
	if len(e.KeepEnv) > 0 {
		fmt.Fprintf(&b, "%s  and, by keep_env: %s\n", prefix, strings.Join(e.KeepEnv, " "))
	} else {
		fmt.Fprintf(&b, "%s  and no others (keep_env adds more)\n", prefix)
	}
	fmt.Fprintf(&b, "%sset to courier's tool caches (ROOT/cache): %s\n", prefix, strings.Join(e.Tools, " "))
	fmt.Fprintf(&b, "%salways: %s\n", prefix, strings.Join(e.Defaults, " "))
	return b.String()
}

// configRun prints the settings (JSON, or TOML with the commands'
// environment and the sandbox layers in comments).
func configRun(o *configOptions) error {
	g, w := o.g, o.g.io.Out
	report, err := g.sandboxReport()
	if err != nil {
		return err
	}
	if o.json {
		data, err := g.cfg.JSON()
		if err != nil {
			return err
		}
		return writeJSON(w, struct {
			Settings    json.RawMessage `json:"settings"`
			Environment commandEnv      `json:"environment"`
			Sandbox     []sandbox.Layer `json:"sandbox"`
		}{json.RawMessage(data), report.Environment, report.Layers})
	}
	if err := g.cfg.Print(w); err != nil {
		return err
	}
	var missing []string
	for _, l := range report.Layers {
		if l.Needed && !l.Active {
			missing = append(missing, l.Name+" ("+l.Detail+")")
		}
	}
	text := "\n" + report.shownText("# ") + report.Environment.text("# ")
	switch {
	case g.cfg.Sandbox == config.SandboxOff:
		text += "# Sandbox: off, commands are not confined\n"
	case len(missing) == 0:
		text += "# Sandbox: every layer active ('courier sandbox check' lists them)\n"
	default:
		text += fmt.Sprintf("# Sandbox: missing %s\n", strings.Join(missing, "; "))
	}
	_, err = io.WriteString(w, text)
	return err
}

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
