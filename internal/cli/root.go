// Package cli is courier's command line: a file per group of commands
// (sessions, history, status, programs, sandbox), each command with an
// options struct, a constructor taking the run function (nil: the real
// one; tests give their own to see the options), and the run function,
// which builds a runner and displays. It writes only through the IO it is
// given, and errors become what the person reads in one place (errors.go).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/workspace"
)

// IO is where a command reads and writes, and what it knows of terminals.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// InTerminal, OutTerminal and ErrTerminal tell whether stdin, stdout
	// and stderr are terminals: questions are asked only on a terminal,
	// colour and progress shown only there.
	InTerminal  bool
	OutTerminal bool
	ErrTerminal bool
	// Getenv reads the environment; Environ is the environment commands
	// start from.
	Getenv  func(string) string
	Environ []string
	// Program is os.Args[0], how the person started courier: the next
	// steps courier prints are said the same way.
	Program string
	// Probe finds what confines commands here (nil: sandbox.Probe); the
	// tests play a system that confines nothing with it.
	Probe func(caches string) sandbox.Kernel
}

// globals are the persistent flags and the effective settings.
type globals struct {
	io        *IO
	root      string
	workspace string
	// cfg is the effective configuration: defaults, courier.toml,
	// COURIER_* variables and flags, in that order.
	cfg *config.Config
	// flags are the setting flags, applied over the settings when given
	// on the command line.
	flags   *pflag.FlagSet
	noColor bool
	quiet   bool
	// set records which flags were given on the command line.
	set map[string]bool
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

// group makes a command that only holds others (policy, sandbox,
// completion) print its help when called alone, and refuse a word that
// names none of its commands: cobra would print the help and exit 0.
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
	// reading commands create nothing (status, log, show, parse...).
	reading use = iota
	// writing commands work in an existing root and make its missing
	// folders (watch, process, approve, undo, paste).
	writing
	// starting makes a root where there is none (new).
	starting
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
	if u != reading {
		if project {
			if err := ignoreAll(abs); err != nil {
				return runner.Paths{}, err
			}
		}
		if err := p.Ensure(); err != nil {
			return runner.Paths{}, err
		}
	}
	return p, nil
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
		*arg = optionalArg(args)
		return run(runF, real, o)
	}
}

// stamped is the version 'make build' and 'make install' give with
// -ldflags -X (git describe: the commit, +changes when the tree had some):
// go stamps no commit in a git worktree, nor with -buildvcs=false.
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
