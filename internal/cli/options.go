package cli

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/loop"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/sandbox"
)

// engineOptions are the settings commands run with: limits, environment,
// policy, sandbox, who answers approval questions, and the console that
// hears about each command. They are built once a run, so the policy is
// compiled once and one reader serves every question asked on stdin.
func (g *globals) engineOptions(con *console) (engine.Options, error) {
	if g.engineOpts == nil {
		pol, err := g.policy()
		if err != nil {
			return engine.Options{}, err
		}
		sb, err := g.sandboxOptions()
		if err != nil {
			return engine.Options{}, err
		}
		g.engineOpts = &engine.Options{
			CommandTimeout: g.cfg.CommandTimeout,
			MaxOutput:      g.cfg.MaxOutput,
			Env:            g.io.Environ,
			KeepEnv:        g.cfg.KeepEnv,
			Policy:         pol,
			Sandbox:        sb,
			Approver:       g.approver(),
		}
	}
	opts := *g.engineOpts
	opts.Observer = con
	return opts, nil
}

// policy compiles the command policy from the settings.
func (g *globals) policy() (*policy.Policy, error) {
	pol, err := policy.New(g.cfg.Policy)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return pol, nil
}

// sandboxOptions returns the OS sandbox for commands, or nil when it is
// off. The kernel is probed once a run, and the layers it refuses are said
// once a run; with sandbox = "strict" each command is refused instead (see
// sandbox.Check).
func (g *globals) sandboxOptions() (*sandbox.Options, error) {
	if g.cfg.Sandbox == config.SandboxOff {
		return nil, nil
	}
	opts, err := g.sandboxSettings()
	if err != nil {
		return nil, err
	}
	opts.Kernel = sandbox.Probe()
	if missing := sandbox.Missing(opts); len(missing) > 0 && !opts.Strict && !g.warnedSandbox {
		g.warnedSandbox = true
		names := make([]string, len(missing))
		for i, l := range missing {
			names[i] = l.Name
		}
		fmt.Fprintf(g.io.Err, "courier: warning: commands run without %s: %s\n", strings.Join(names, ", "), missing[0].Detail)
		fmt.Fprintf(g.io.Err, "courier: hint: 'courier sandbox check' shows what each layer protects; set sandbox = \"strict\" in courier.toml to refuse commands instead\n")
	}
	return &opts, nil
}

// sandboxSettings are the sandbox options the settings and the person's
// environment give, before the kernel is probed: courier's tool caches in
// ROOT/cache, the person's secret places and session sockets hidden, and
// courier's own sessions, inbox and outbox hidden too (a command could
// otherwise read other sessions and answer for them).
func (g *globals) sandboxSettings() (sandbox.Options, error) {
	root, err := filepath.Abs(g.rootDir())
	if err != nil {
		return sandbox.Options{}, fmt.Errorf("root %s: %w", g.rootDir(), err)
	}
	p := loop.DefaultPaths(root)
	home := g.io.Getenv("HOME")
	hide := append(sandbox.SecretPlaces(home), sandbox.SessionSockets(g.io.Getenv)...)
	opts := sandbox.Options{
		Hide:      append(hide, p.Sessions, p.Inbox, p.Outbox),
		Show:      sandbox.ToolFolders(g.io.Getenv),
		Caches:    filepath.Join(root, "cache"),
		NoNetwork: !g.cfg.Network,
		Strict:    g.cfg.Sandbox == config.SandboxStrict,
	}
	if g.cfg.Home == config.HomeHidden && filepath.IsAbs(home) {
		opts.HideHome = home
	}
	return opts, nil
}

// approver answers approval questions: yes to all with --yes, on a
// terminal by asking, and otherwise not at all (the session waits for
// 'courier approve' or 'courier deny').
func (g *globals) approver() engine.Approver {
	switch {
	case g.cfg.Yes:
		return yesApprover{}
	case g.io.InTerminal && g.io.ErrTerminal:
		return &terminalApprover{g: g, in: bufio.NewReader(g.io.In)}
	}
	return nil
}

type yesApprover struct{}

func (yesApprover) Approve(context.Context, command.Command, policy.Verdict) (engine.Answer, string, error) {
	return engine.Approve, "", nil
}

// terminalApprover asks the person on the terminal.
type terminalApprover struct {
	g  *globals
	in *bufio.Reader
}

func (a *terminalApprover) Approve(ctx context.Context, c command.Command, v policy.Verdict) (engine.Answer, string, error) {
	return askApproval(a.g.io.Err, a.in, c, v)
}

// askApproval shows the command and reads the answer: y (run it), n (do
// not), a (run it and every later one like it), w (decide later).
func askApproval(w interface{ Write([]byte) (int, error) }, in *bufio.Reader, c command.Command, v policy.Verdict) (engine.Answer, string, error) {
	fmt.Fprintf(w, "\ncourier: this command needs your approval: %s\n", v.Reason)
	for _, line := range strings.Split(strings.TrimRight(c.Command, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
	for {
		fmt.Fprintf(w, "Run it? [y]es, [n]o, [a]ll like it this session, [w]ait and decide later: ")
		line, err := in.ReadString('\n')
		answer := strings.ToLower(strings.TrimSpace(line))
		switch {
		case answer == "y" || answer == "yes":
			return engine.Approve, "", nil
		case answer == "a" || answer == "all":
			return engine.ApproveAll, "", nil
		case answer == "n" || answer == "no":
			fmt.Fprintf(w, "Why (told to the LLM; Enter to skip): ")
			reason, _ := in.ReadString('\n')
			return engine.Reject, strings.TrimSpace(reason), nil
		case answer == "w" || answer == "wait" || err != nil:
			return engine.Wait, "", nil
		}
	}
}
