package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

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
