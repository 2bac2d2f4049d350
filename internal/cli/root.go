// Package cli is courier's command line: a file per group of commands,
// each command with an options struct, a constructor taking the run
// function (nil: the real one; tests give their own to see the options),
// and the run function, which builds a runner and displays. It writes only
// through the IO it is given, and errors become what the person reads in
// one place (errors.go).
package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/workspace"
)

// IO is where a command reads and writes, and what it knows of terminals.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	// Questions are asked, colour and progress shown, only on terminals.
	InTerminal, OutTerminal, ErrTerminal bool
	// Environ is the environment commands start from.
	Getenv  func(string) string
	Environ []string
	// Program is os.Args[0]: the next steps courier prints are said so.
	Program string
	// Probe finds what confines commands here (nil: sandbox.Probe).
	Probe func(caches string) sandbox.Kernel
}

// globals are the persistent flags and the effective settings.
type globals struct {
	io              *IO
	root, workspace string
	cfg             *config.Config
	// flags are the setting flags, applied over the settings when given
	// (set records which flags were).
	flags          *pflag.FlagSet
	set            map[string]bool
	noColor, quiet bool
}

// Main runs courier with args (without the program name): the exit status.
func Main(ctx context.Context, args []string, stdio *IO) int {
	if stdio.Getenv == nil {
		stdio.Getenv = func(string) string { return "" }
	}
	cmd := newRoot(stdio)
	cmd.SetArgs(args)
	cmd.SetIn(stdio.In)
	cmd.SetOut(stdio.Out)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	return report(cmd.ErrOrStderr(), err)
}

func newRoot(stdio *IO) *cobra.Command {
	sio := *stdio
	if sio.Probe == nil {
		sio.Probe = sandbox.Probe
	}
	g := &globals{io: &sio, set: map[string]bool{}}
	if sio.Err != nil {
		// Errors, warnings and hints say their next steps as the person
		// runs courier.
		sio.Err = stepsWriter{stdio.Err, g}
	}
	root := &cobra.Command{
		Use:   "courier",
		Short: "Turn any chat LLM into a coding agent on your machine, by copy and paste",
		Long: `courier writes a self-contained request (outbox/) for a chat LLM, you paste it
into the chat and save the answer into inbox/, and courier carries out the
answer's commands in a sandboxed workspace and writes the next request,
until the LLM says DONE.`,
		Example: `  courier new "add a --verbose flag to main.go"
  courier watch
  courier process inbox/reply.txt`,
		Version:       versionLine(),
		SilenceErrors: true,
		SilenceUsage:  true,
		// With subcommands, an unknown word reaches the root: a usage error.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usage(withHint(fmt.Errorf("unknown command %q", args[0]), "run 'courier --help' for the commands"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			cmd.Flags().Visit(func(f *pflag.Flag) { g.set[f.Name] = true })
			return g.configure()
		},
	}
	root.SetErr(sio.Err)
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usage(withHint(err, "run 'courier --help' for usage"))
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.root, "root", "", "folder holding workspace/, inbox/, outbox/ and sessions/ (env COURIER_ROOT; default: current folder)")
	pf.StringVar(&g.workspace, "workspace", "", "folder the LLM works on (default: ROOT/workspace)")
	g.settingFlags(pf)
	pf.BoolVar(&g.noColor, "no-color", false, "no colour in output (same as --color never)")
	pf.BoolVarP(&g.quiet, "quiet", "q", false, "print only failures, messages and what to do next")
	withID := []*cobra.Command{
		newWatchCmd(g, nil), newStatusCmd(g, nil), newShowCmd(g, nil), newUndoCmd(g, nil), newLogCmd(g, nil),
		newApproveCmd(g, nil), newDenyCmd(g, nil), newPasteCmd(g, nil), newSayCmd(g, nil), newContinueCmd(g, nil),
		newDiffCmd(g, nil), newGCCmd(g, nil),
	}
	for _, c := range withID {
		c.ValidArgsFunction = g.sessionArgs
	}
	root.AddCommand(withID...)
	root.AddCommand(newNewCmd(g, nil), newProcessCmd(g, nil), newOpsCmd(g, nil), newServeCmd(g, nil), newParseCmd(g, nil),
		newSessionsCmd(g, nil), newPolicyCmd(g, nil), newConfigCmd(g, nil), newVersionCmd(g, nil), newSandboxCmd(g, nil))
	completeSettings(root)
	// cobra adds its help and completion commands when it runs; added now,
	// they get the same usage errors as courier's own.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	plainBash(root)
	if help, _, err := root.Find([]string{"help"}); err == nil {
		help.Run, help.RunE = nil, helpTopic
	}
	// Wrong arguments are usage errors, whichever command they reach.
	var usageArgs func(c *cobra.Command)
	usageArgs = func(c *cobra.Command) {
		if c != root && c.HasSubCommands() && !c.Runnable() {
			group(c)
		}
		if check := c.Args; check != nil && c != root {
			c.Args = func(cmd *cobra.Command, args []string) error {
				err := check(cmd, args)
				if !errors.As(err, new(*hinted)) {
					err = withHint(err, fmt.Sprintf("run '%s --help' for usage", cmd.CommandPath()))
				}
				return usage(err)
			}
		}
		for _, sub := range c.Commands() {
			usageArgs(sub)
		}
	}
	usageArgs(root)
	return root
}

// group makes a command that only holds others print its help, and refuse
// a word that names none of them (cobra would print the help, exit 0).
func group(c *cobra.Command) {
	c.SuggestionsMinimumDistance = 2
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		err := fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
		if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
			return withHint(err, fmt.Sprintf("did you mean '%s %s'?", cmd.CommandPath(), near[0]))
		}
		return err
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// helpTopic is 'courier help [COMMAND...]': an unknown topic is a usage error.
func helpTopic(c *cobra.Command, args []string) error {
	target, rest, err := c.Root().Find(args)
	if err != nil || len(rest) > 0 {
		return usage(withHint(fmt.Errorf("unknown help topic %q", strings.Join(args, " ")), "run 'courier --help' for the commands"))
	}
	target.InitDefaultHelpFlag()
	target.InitDefaultVersionFlag()
	return target.Help()
}

// use says what a command does with courier's folders.
type use int

const (
	reading  use = iota // create nothing (status, log, show...)
	writing             // make an existing root's missing folders
	starting            // make a root where there is none (new)
)

// paths resolves the root and workspace folders. Only a command that
// starts a session makes a root; the others need one that holds sessions/.
func (g *globals) paths(u use) (runner.Paths, error) {
	root := g.rootDir()
	abs, err := filepath.Abs(root)
	if err != nil {
		return runner.Paths{}, fmt.Errorf("root %s: %w", root, err)
	}
	p := runner.DefaultPaths(abs)
	p.Home = g.io.Getenv("HOME")
	project := filepath.Base(abs) == workspace.CourierDir
	if project {
		p.Workspace = filepath.Dir(abs)
	}
	if g.workspace != "" {
		ws, err := filepath.Abs(g.workspace)
		if err != nil {
			return runner.Paths{}, fmt.Errorf("workspace %s: %w", g.workspace, err)
		}
		if info, err := os.Stat(ws); err != nil || !info.IsDir() {
			return runner.Paths{}, withHint(fmt.Errorf("workspace %s is not a folder", g.workspace), "point --workspace at an existing project folder")
		}
		p.Workspace = ws
	}
	if err := p.CheckLayout(p.Workspace); err != nil {
		return runner.Paths{}, err
	}
	if info, err := os.Stat(p.Sessions); u != starting && (err != nil || !info.IsDir()) {
		return runner.Paths{}, withHint(fmt.Errorf("%s holds no courier sessions (no sessions/ folder)", abs),
			"start a session there with 'courier new', or point --root (COURIER_ROOT) at the folder that holds sessions/")
	}
	if u == reading {
		return p, nil
	}
	if project {
		if err := ignoreAll(abs); err != nil {
			return runner.Paths{}, err
		}
	}
	return p, p.Ensure()
}

// ignoreAll makes a project's .courier folder one git does not see, by a
// .gitignore of its own: the project's .gitignore is the person's.
func ignoreAll(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err == nil {
		_, err = f.WriteString("# courier's own files: sessions, requests and replies\n*\n")
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", filepath.Join(dir, ".gitignore"), err)
	}
	return nil
}

// run calls runF, which tests give to see the options, or the real one.
func run[O any](runF, real func(*O) error, o *O) error {
	if runF != nil {
		return runF(o)
	}
	return real(o)
}

// optional is the RunE of a command taking one optional argument.
func optional[O any](o *O, arg *string, ctx *context.Context, runF, real func(*O) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if ctx != nil {
			*ctx = cmd.Context()
		}
		if len(args) == 1 {
			*arg = args[0]
		}
		return run(runF, real, o)
	}
}

// stamped is the version (git describe) 'make build' gives with -ldflags
// -X: go stamps no commit in a git worktree, nor with -buildvcs=false.
var stamped string

// version is courier's version as the build knows it: the one stamped,
// else the module version go recorded (a release's, or since Go 1.24 the
// commit's), else devel.
func version() string {
	if stamped != "" {
		return stamped
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// versionLine is what --version and 'courier version' print.
func versionLine() string {
	return fmt.Sprintf("courier %s (%s, %s/%s)", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

type versionOptions struct{ g *globals }

func newVersionCmd(g *globals, runF func(*versionOptions) error) *cobra.Command {
	o := &versionOptions{g: g}
	return &cobra.Command{
		Use:     "version",
		Short:   "Print courier's version and the Go version it was built with",
		Example: `  courier version`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return run(runF, versionRun, o) },
	}
}

func versionRun(o *versionOptions) error {
	_, err := fmt.Fprintln(o.g.io.Out, versionLine())
	return err
}

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
// parse; kind names the value in --help.
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

// rootDir is the root folder: as given (--root, COURIER_ROOT), or found
// from the current folder, or the --workspace given.
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

// plainBash makes 'courier completion bash' work without the
// bash-completion package, whose two functions the script then brings.
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

// bashBasics are those two functions, in brief.
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
