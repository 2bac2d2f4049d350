// Package sandbox confines a shell command with Linux Landlock so that it may
// read the machine but write only inside the workspace and temporary folders.
//
// Landlock restricts the calling process and everything it starts, so courier
// does not restrict itself: it re-executes its own binary with ExecArg as the
// first argument; that short-lived process (Main) applies the rules and then
// replaces itself with the shell.
package sandbox

import (
	"errors"
	"fmt"
	"os"
)

// ExecArg is the hidden first argument that makes courier act as the
// sandbox launcher instead of its normal command line.
const ExecArg = "__sandbox-exec"

// Options says how to confine a command.
type Options struct {
	// Exe is the courier executable to re-exec (os.Executable()); empty
	// means the running executable.
	Exe string
	// Writable lists the folders the command may change, besides the
	// temporary folders; the caller passes the workspace root here.
	Writable []string
	// NoNetwork also denies TCP connect/bind (Landlock ABI 4 and newer; UDP
	// from ABI 10) and abstract UNIX sockets outside the sandbox.
	NoNetwork bool
	// Strict refuses to run a command when Landlock is unavailable instead
	// of running it unconfined.
	Strict bool
}

// Flags of the re-exec command line, between ExecArg and "--".
const (
	flagWritable  = "--rw"
	flagNoNetwork = "--no-network"
	flagStrict    = "--strict"
	flagEnd       = "--"
)

// Command returns the argv that runs shellArgv (e.g. /bin/sh -c text) under
// the sandbox: [Exe, ExecArg, flags..., "--", shellArgv...]. shellArgv[0]
// must be an absolute path, since Main executes it without a PATH search.
func Command(opts Options, shellArgv []string) []string {
	argv := []string{opts.Exe, ExecArg}
	for _, dir := range opts.Writable {
		argv = append(argv, flagWritable, dir)
	}
	if opts.NoNetwork {
		argv = append(argv, flagNoNetwork)
	}
	if opts.Strict {
		argv = append(argv, flagStrict)
	}
	argv = append(argv, flagEnd)
	return append(argv, shellArgv...)
}

// parseArgs reads the arguments Command put after ExecArg back into Options
// and the command to execute.
func parseArgs(args []string) (Options, []string, error) {
	var opts Options
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case flagWritable:
			if i+1 >= len(args) {
				return Options{}, nil, errors.New("--rw needs a folder")
			}
			i++
			opts.Writable = append(opts.Writable, args[i])
		case flagNoNetwork:
			opts.NoNetwork = true
		case flagStrict:
			opts.Strict = true
		case flagEnd:
			argv := args[i+1:]
			if len(argv) == 0 {
				return Options{}, nil, errors.New("no command after --")
			}
			return opts, argv, nil
		default:
			return Options{}, nil, fmt.Errorf("unknown argument %q", args[i])
		}
	}
	return Options{}, nil, errors.New("missing -- before the command")
}

// ExitFailure is Main's exit code when it cannot run the command, the
// shell's own code for "found but could not be executed".
const ExitFailure = 126

// TempDirs are writable for every command: compilers, test runners and
// package managers expect scratch space there.
func TempDirs() []string {
	return []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"}
}
