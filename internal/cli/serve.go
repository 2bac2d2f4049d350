package cli

import (
	"context"
	"fmt"
	"net"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/serve"
)

type serveOptions struct {
	g      *globals
	ctx    context.Context
	addr   string
	noOpen bool
}

func newServeCmd(g *globals, runF func(*serveOptions) error) *cobra.Command {
	o := &serveOptions{g: g}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Work on the sessions in a browser tab, and serve them over HTTP to programs",
		Long: `Serve this root's sessions as a page (copy the request, paste the answer,
review it before it is applied, answer approvals, say, undo, continue) and
over HTTP for programs: the sessions' JSON API and the Agent Spaces runtime
(/v1/runs), as the README describes. Prints the address with its token
and, on a desktop, opens it. Every request needs the token; only this
machine's loopback is served unless --addr names another address. The page
is one more view of the sessions: 'courier watch' and the other commands
work on them meanwhile. Ctrl-C stops it.`,
		Example: `  courier serve
  courier serve --addr 127.0.0.1:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ctx = cmd.Context()
			return run(runF, serveRun, o)
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:0", "the address to listen on (default: the loopback, a free port)")
	cmd.Flags().BoolVar(&o.noOpen, "no-open", false, "do not open the page in a browser")
	return cmd
}

func serveRun(o *serveOptions) error {
	b, err := o.g.runner(view{use: starting, program: true})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return withHint(fmt.Errorf("serve: %w", err), "give another address with --addr, such as 127.0.0.1:0 for a free port")
	}
	token := serve.NewToken()
	url := fmt.Sprintf("http://%s/?token=%s", ln.Addr(), token)
	fmt.Fprintf(o.g.io.Out, "Serving on %s\n", url)
	if _, err := exec.LookPath("xdg-open"); err == nil && !o.noOpen && o.g.desktop() {
		// Without a desktop (or xdg-open) the printed address is all.
		desktopRun("xdg-open", url)
	}
	return serve.New(o.ctx, serve.Options{Config: b.cfg, Token: token}).Run(ln)
}
