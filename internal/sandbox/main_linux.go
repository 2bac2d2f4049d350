package sandbox

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Main is courier's sandbox launcher, run when os.Args[1] == ExecArg with
// the arguments after it. It restricts itself with Landlock as the flags say
// and replaces itself with the command, which inherits the restriction along
// with everything it starts. It returns only on failure, with ExitFailure,
// after writing "courier: error: sandbox: ..." to stderr.
func Main(args []string, stderr io.Writer) int {
	opts, argv, err := parseArgs(args)
	if err != nil {
		return fail(stderr, err)
	}
	if err := confine(opts); err != nil {
		return fail(stderr, err)
	}
	err = syscall.Exec(argv[0], argv, os.Environ())
	return fail(stderr, fmt.Errorf("run %s: %w", argv[0], err))
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "courier: error: sandbox: %v\n", err)
	return ExitFailure
}

// confine applies the Landlock rules for opts to the current process.
func confine(opts Options) error {
	abi, err := Check(opts)
	if err != nil {
		return err
	}
	if abi == 0 {
		return nil
	}
	if err := landlockConfig(opts).BestEffort().Restrict(rules(opts, abi)...); err != nil {
		return fmt.Errorf("apply landlock rules: %w", err)
	}
	return nil
}
