package sandbox

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Main is courier's sandbox launcher, run when os.Args[1] == ExecArg with
// the arguments after it. It builds the command's confinement as the
// options say and starts the command: in a PID namespace it stays as the
// namespace's first process until the command ends (see runInit), and
// otherwise it replaces itself with the command. It returns only on
// failure, with ExitFailure, after writing "courier: error: sandbox: ..."
// to stderr, or, as the namespace's first process, with the command's
// status.
func Main(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == probeArg {
		return probeChild(args[1:], os.Stdout)
	}
	argv, err := parseArgs(args)
	if err != nil {
		return fail(stderr, err)
	}
	req, err := readRequest(os.Stdin)
	if err != nil {
		return fail(stderr, err)
	}
	opts := req.Options
	if err := nullStdin(); err != nil {
		return fail(stderr, err)
	}
	if err := joinCgroups(opts.Limits.Cgroups); err != nil {
		return fail(stderr, err)
	}
	newKeyring()
	if opts.Kernel.Namespaces {
		if err := enterNamespaces(opts); err != nil {
			return fail(stderr, err)
		}
	}
	if err := confine(opts); err != nil {
		return fail(stderr, err)
	}
	if len(opts.Limits.Cgroups) == 0 {
		if err := setRlimits(opts.Limits); err != nil {
			return fail(stderr, err)
		}
	}
	if opts.Kernel.Namespaces {
		code, err := runInit(argv, req.Env)
		if err != nil {
			return fail(stderr, err)
		}
		return code
	}
	err = syscall.Exec(argv[0], argv, req.Env)
	return fail(stderr, fmt.Errorf("run %s: %w", argv[0], err))
}

// newKeyring gives the launcher, and so the command, a new session keyring
// of its own in place of the person's. Where keyring calls are refused
// already (a container's own filter) there is nothing to leave.
func newKeyring() {
	_, _ = unix.KeyctlInt(unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0)
}

// nullStdin puts /dev/null on stdin once the options are read: commands
// have no input.
func nullStdin() error {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer null.Close()
	if err := syscall.Dup3(int(null.Fd()), 0, 0); err != nil {
		return fmt.Errorf("put %s on stdin: %w", os.DevNull, err)
	}
	return nil
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "courier: error: sandbox: %v\n", err)
	return ExitFailure
}

// enterNamespaces sets up what the new namespaces hold: the command's view
// of the files and, with the network cut, a loopback that is up.
func enterNamespaces(opts Options) error {
	if os.Getpid() != 1 {
		return fmt.Errorf("the launcher is process %d, not the first process of a new PID namespace", os.Getpid())
	}
	// The working folder was entered before the new mounts; entered by
	// that handle, relative paths would walk the files beneath them.
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("find the working folder: %w", err)
	}
	if err := buildWorld(opts); err != nil {
		return err
	}
	if err := os.Chdir(wd); err != nil {
		return fmt.Errorf("enter the working folder again: %w", err)
	}
	if opts.NoNetwork && opts.Kernel.Network {
		return loopbackUp()
	}
	return nil
}
