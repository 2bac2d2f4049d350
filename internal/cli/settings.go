package cli

import (
	"cmp"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/workspace"
)

// settingFlags defines a flag for every top-level setting.
func (g *globals) settingFlags(pf *pflag.FlagSet) {
	g.flags = pf
	for _, s := range config.Settings() {
		if s.Kind == "bool" && s.Flag != "" {
			def, _ := strconv.ParseBool(s.Default)
			pf.Bool(s.Flag, def, s.Help)
		} else if s.Flag != "" {
			pf.Var(&settingFlag{text: s.Default, kind: s.Kind}, s.Flag, s.Help)
		}
	}
}

// settingFlag holds a setting's flag as text, for the config package to
// parse with its own rules and errors; its kind names the value in --help
// ("--command-timeout duration"), as typed flags would.
type settingFlag struct {
	text string
	kind string
}

func (f *settingFlag) String() string     { return f.text }
func (f *settingFlag) Set(v string) error { f.text = v; return nil }
func (f *settingFlag) Type() string       { return f.kind }

// configure builds the effective settings: defaults, courier.toml,
// COURIER_* variables, flags.
func (g *globals) configure() error {
	cfg := config.Defaults()
	if err := cfg.LoadFile(filepath.Join(g.rootDir(), "courier.toml")); err != nil {
		return err
	}
	if err := cfg.LoadEnv(g.io.Getenv); err != nil {
		return err
	}
	for _, s := range config.Settings() {
		if s.Flag != "" && g.set[s.Flag] {
			if err := cfg.Set(s.Flag, g.flags.Lookup(s.Flag).Value.String(), config.FlagSource(s.Flag)); err != nil {
				return usage(err)
			}
		}
	}
	if g.noColor {
		if err := cfg.Set("color", config.ColorNever, config.FlagSource("no-color")); err != nil {
			return err
		}
	}
	g.cfg = cfg
	return nil
}

// rootDir is the root folder: as given (--root, COURIER_ROOT), or else
// found from the current folder (see findRoot), or from the --workspace
// given when the current folder is in no courier root of its own layout.
func (g *globals) rootDir() string {
	if root := cmp.Or(g.root, g.io.Getenv("COURIER_ROOT")); root != "" {
		return root
	}
	root := findRoot(".", g.io.Getenv("HOME"))
	if g.workspace != "" && filepath.Base(root) == workspace.CourierDir {
		// The project given, not the folder courier happens to run in.
		root = findRoot(g.workspace, g.io.Getenv("HOME"))
	}
	return root
}

// findRoot finds the root from the folder start up: the nearest folder
// holding .courier (a project courier worked on before), or sessions/ and
// workspace/ (courier's own layout, as this repository's clone has it), or
// .git (the top of a project, so that 'courier new' in app/src means app).
// A project's root is its .courier folder; with none of these it is
// start's. The home folder is not climbed into: it is no project.
func findRoot(start, home string) string {
	abs, err := filepath.Abs(start)
	if err != nil {
		return filepath.Join(start, workspace.CourierDir)
	}
	isDir := func(p string) bool { info, err := os.Stat(p); return err == nil && info.IsDir() }
	for d := abs; ; d = filepath.Dir(d) {
		if d != abs && d == filepath.Clean(home) {
			break
		}
		if isDir(filepath.Join(d, workspace.CourierDir)) {
			return filepath.Join(d, workspace.CourierDir)
		}
		if isDir(filepath.Join(d, "sessions")) && isDir(filepath.Join(d, "workspace")) {
			return d
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return filepath.Join(d, workspace.CourierDir)
		}
		if d == filepath.Clean(home) || filepath.Dir(d) == d {
			break
		}
	}
	return filepath.Join(abs, workspace.CourierDir)
}

type configOptions struct {
	g    *globals
	json bool
}

func newConfigCmd(g *globals, runF func(*configOptions) error) *cobra.Command {
	o := &configOptions{g: g}
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective settings and where each came from",
		Long: `Print every setting with its value and its source: the default,
courier.toml in the root (with its line), a COURIER_* environment variable,
or a flag. Later sources win, in that order. The output is valid TOML, so it
can start a courier.toml. It ends with the variables commands get and the
sandbox layers this kernel refuses ('courier sandbox check' shows them all).`,
		Example: `  courier config
  COURIER_MAX_OUTPUT=8000 courier config --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return run(runF, configRun, o) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	return cmd
}

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

// completeSettings completes the flags of settings with a fixed set of values.
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
