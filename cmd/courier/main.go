// Command courier turns any chat LLM into a coding agent on the person's own
// machine, by copy and paste. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/courier-agent/courier/internal/cli"
	"github.com/courier-agent/courier/internal/inherit"
	"github.com/courier-agent/courier/internal/sandbox"
)

func main() { os.Exit(run(sandbox.Probe)) }

// run is courier, with probe finding what confines commands.
func run(probe func(caches string) sandbox.Kernel) int {
	// The command sandbox starts courier again (from /proc/self/exe) as the
	// launcher that confines the shell; that run does nothing else.
	if len(os.Args) > 1 && os.Args[1] == sandbox.ExecArg {
		return sandbox.Main(os.Args[2:], os.Stderr)
	}
	// Files inherited from whatever started courier pass on to no program
	// it starts (the launcher above is handed its files on purpose).
	inherit.Seal()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cli.Main(ctx, os.Args[1:], &cli.IO{
		In:          os.Stdin,
		Out:         os.Stdout,
		Err:         os.Stderr,
		InTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
		OutTerminal: term.IsTerminal(int(os.Stdout.Fd())),
		ErrTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		Getenv:      os.Getenv,
		Environ:     os.Environ(),
		Program:     os.Args[0],
		Probe:       probe,
	})
}
