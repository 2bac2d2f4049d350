// Package cli is courier's command line: one file per command, each with an
// options struct and a run function, writing only through the IO it is
// given so that tests can capture everything.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/hint"
	"github.com/courier-agent/courier/internal/loop"
)

// IO is where a command reads and writes, and what it knows about the
// terminal.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// InTerminal and ErrTerminal tell whether stdin and stderr are
	// terminals: questions are asked only on a terminal, colour and progress
	// shown only there.
	InTerminal  bool
	OutTerminal bool
	ErrTerminal bool
	// Getenv reads the environment; Environ is the environment commands
	// start from.
	Getenv  func(string) string
	Environ []string
	// Exe is courier's own executable, re-run for the command sandbox.
	Exe string
}

// ExitError carries a specific exit status.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Exit codes beyond 0 (success) and 1 (error).
const (
	ExitUsage = 2
	// ExitWaiting means the session waits for the person's approval.
	ExitWaiting = 3
)

// quietError is an ending that is not a failure (Ctrl-C, a session waiting
// for approval): it is printed without "error:".
type quietError string

func (q quietError) Error() string { return string(q) }

// waitingError says a session waits for the person's decision.
func waitingError(id, command, reason string) error {
	return hint.Wrap(quietError(fmt.Sprintf("session %s waits for approval of '%s' (%s)", id, firstLine(command, 80), reason)),
		fmt.Sprintf("run 'courier approve %s' to run it or 'courier deny %s' to refuse it", id, id))
}

// globals are the persistent flags and the effective settings every
// command shares.
type globals struct {
	io        *IO
	root      string
	workspace string
	// cfg is the effective configuration: defaults, courier.toml,
	// COURIER_* variables and flags, in that order.
	cfg *config.Config
	// flags holds the raw text of the setting flags, applied over the
	// settings when given on the command line.
	flags   map[string]*string
	bools   map[string]*bool
	noColor bool
	quiet   bool
	// set records which flags were given on the command line.
	set map[string]bool
	// engineOpts are built once a run (see engineOptions).
	engineOpts *engine.Options
	// warnedSandbox and warnedClipboard keep those warnings to once a run.
	warnedSandbox   bool
	warnedClipboard bool
}

// Main runs courier with args (without the program name) and returns the
// exit status.
func Main(ctx context.Context, args []string, stdio *IO) int {
	if stdio.Getenv == nil {
		stdio.Getenv = func(string) string { return "" }
	}
	cmd := newRoot(stdio)
	cmd.SetArgs(args)
	cmd.SetIn(stdio.In)
	cmd.SetOut(stdio.Out)
	cmd.SetErr(stdio.Err)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	return report(stdio.Err, err)
}

// report prints an error as "courier: error: ..." with its hint and
// returns the exit status.
func report(w io.Writer, err error) int {
	msg := strings.TrimSuffix(err.Error(), ".")
	var q quietError
	if errors.As(err, &q) {
		fmt.Fprintf(w, "courier: %s\n", msg)
	} else {
		fmt.Fprintf(w, "courier: error: %s\n", msg)
	}
	if h := hint.Of(err); h != "" {
		fmt.Fprintf(w, "courier: hint: %s\n", h)
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

func newRoot(stdio *IO) *cobra.Command {
	g := &globals{io: stdio, set: map[string]bool{}}
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
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			cmd.Flags().Visit(func(f *pflag.Flag) { g.set[f.Name] = true })
			return g.configure()
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: hint.Wrap(err, "run 'courier --help' for usage")}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.root, "root", "", "folder holding workspace/, inbox/, outbox/ and sessions/ (env COURIER_ROOT; default: current folder)")
	pf.StringVar(&g.workspace, "workspace", "", "folder the LLM works on (default: ROOT/workspace)")
	g.settingFlags(pf)
	pf.BoolVar(&g.noColor, "no-color", false, "no colour in output (same as --color never)")
	pf.BoolVarP(&g.quiet, "quiet", "q", false, "print only failures, messages and what to do next")
	root.AddCommand(
		newNewCmd(g),
		newWatchCmd(g),
		newProcessCmd(g),
		newParseCmd(g),
		newStatusCmd(g),
		newSessionsCmd(g),
		newShowCmd(g),
		newUndoCmd(g),
		newLogCmd(g),
		newApproveCmd(g),
		newDenyCmd(g),
		newPolicyCmd(g),
		newConfigCmd(g),
		newPasteCmd(g),
	)
	return root
}

// paths resolves the root and workspace folders and creates what is
// missing.
func (g *globals) paths() (loop.Paths, error) {
	root := g.rootDir()
	abs, err := filepath.Abs(root)
	if err != nil {
		return loop.Paths{}, fmt.Errorf("root %s: %w", root, err)
	}
	p := loop.DefaultPaths(abs)
	if g.workspace != "" {
		ws, err := filepath.Abs(g.workspace)
		if err != nil {
			return loop.Paths{}, fmt.Errorf("workspace %s: %w", g.workspace, err)
		}
		if info, err := os.Stat(ws); err != nil || !info.IsDir() {
			return loop.Paths{}, hint.Wrap(fmt.Errorf("workspace %s is not a folder", g.workspace), "point --workspace at an existing project folder")
		}
		p.Workspace = ws
	}
	if err := p.Ensure(); err != nil {
		return loop.Paths{}, err
	}
	return p, nil
}

// loop returns the session loop for the resolved folders.
func (g *globals) loop() (*loop.Loop, error) {
	p, err := g.paths()
	if err != nil {
		return nil, err
	}
	return loop.New(p, loop.Options{
		MaxReply:    g.cfg.MaxReply,
		ListLimit:   g.cfg.ListLimit,
		ReadLines:   g.cfg.ReadLines,
		TokenBudget: g.cfg.TokenBudget,
	}), nil
}
