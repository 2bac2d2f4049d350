package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/engine"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/termtext"
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
		g.engineOpts = &engine.Options{
			CommandTimeout: g.cfg.CommandTimeout,
			MaxOutput:      g.cfg.MaxOutput,
			Env:            g.io.Environ,
			KeepEnv:        g.cfg.KeepEnv,
			Policy:         pol,
			Sandbox:        g.sandboxOptions(),
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
// off or the kernel cannot provide it (said once per run).
func (g *globals) sandboxOptions() *sandbox.Options {
	if g.cfg.Sandbox == config.SandboxOff {
		return nil
	}
	opts := &sandbox.Options{Exe: g.io.Exe, Strict: g.cfg.Sandbox == config.SandboxStrict, NoNetwork: !g.cfg.Network, Writable: g.cacheDirs()}
	if opts.Strict || opts.NoNetwork {
		// Refusing to run unconfined is the shell's job; it says why per
		// command.
		return opts
	}
	if abi, err := sandbox.Available(); abi == 0 {
		if !g.warnedSandbox {
			g.warnedSandbox = true
			fmt.Fprintf(g.io.Err, "courier: warning: commands run without the Landlock sandbox: %v\n", err)
			fmt.Fprintf(g.io.Err, "courier: hint: set sandbox = \"strict\" in courier.toml to refuse commands instead\n")
		}
		return nil
	}
	return opts
}

// cacheDirs are the per-user tool caches commands may write under the
// sandbox: without them a build or test in the workspace fails to cache.
// Only folders that exist are given.
func (g *globals) cacheDirs() []string {
	home := g.io.Getenv("HOME")
	if home == "" {
		return nil
	}
	var dirs []string
	for _, d := range []string{".cache", ".npm", "go", ".cargo", ".m2", ".gradle", ".rustup"} {
		p := filepath.Join(home, d)
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			dirs = append(dirs, p)
		}
	}
	return dirs
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
//
// The command is shown whole, every line indented behind a bar and made
// safe for the terminal, and closed by a line of courier's own: nothing in
// the command can move the cursor, clear what was shown, or pass for the
// question.
func askApproval(w interface{ Write([]byte) (int, error) }, in *bufio.Reader, c command.Command, v policy.Verdict) (engine.Answer, string, error) {
	fmt.Fprintf(w, "\ncourier: this command needs your approval: %s\n", termtext.Safe(v.Reason))
	lines := strings.Split(strings.TrimRight(c.Command, "\n"), "\n")
	for _, line := range lines {
		fmt.Fprintf(w, "    │ %s\n", termtext.Safe(line))
	}
	n := fmt.Sprintf("%d lines", len(lines))
	if len(lines) == 1 {
		n = "1 line"
	}
	fmt.Fprintf(w, "    └ end of the command (%s)\n", n)
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
