package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/clipboard"
	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/console"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/workspace"
)

// view is how a command shows what happens (the text console or JSON
// lines) and what it does with courier's folders.
type view struct {
	use  use
	json bool
	// wait is what the terminal's "w" answer means for the command.
	wait runner.Answer
	// program says stdout is for a program ('courier ops'): the console
	// writes to stderr, and nobody is asked questions.
	program bool
}

// built is a runner, and the text console when that is its reporter (nil
// with JSON).
type built struct {
	*runner.Runner
	text *console.Text
	// cfg is what the runner was built from ('courier serve' builds one
	// per request from it, each with a reporter of its own).
	cfg runner.Config
}

// runner builds the runner a command uses: the folders, the limits, how
// commands run, the protocols, and who reports and who answers questions.
func (g *globals) runner(v view) (*built, error) {
	p, err := g.paths(v.use)
	if err != nil {
		return nil, err
	}
	pol, err := g.preset("") // the person's own
	if err != nil {
		return nil, err
	}
	b := &built{}
	var rep runner.Reporter = console.NewJSON(g.io.Out)
	if !v.json {
		var out io.Writer = stepsWriter{g.io.Out, g}
		if v.program {
			out = g.io.Err
		}
		b.text = g.console(p.Root, out)
		rep = b.text
	}
	c := g.cfg
	b.cfg = runner.Config{
		Paths:          p,
		WorkspaceGiven: g.workspace != "",
		Limits:         runner.Limits{MaxReply: c.MaxReply, ListLimit: c.ListLimit, ReadLines: c.ReadLines, TokenBudget: c.TokenBudget},
		Commands: runner.Commands{Timeout: c.CommandTimeout, MaxOutput: c.MaxOutput, Env: g.io.Environ, KeepEnv: c.KeepEnv,
			Policy: pol, Sandbox: g.sandboxOptions(p, rep)},
		FrontEnds:    frontEnds(),
		Reporter:     rep,
		Approver:     g.approver(v),
		Presets:      g.preset,
		ProtocolOnce: c.Protocol == config.ProtocolFirst,
		Environment:  c.Environment,
		Snapshots: runner.Snapshots{Off: !c.Snapshots, Exclude: c.SnapshotExclude, Include: c.SnapshotInclude,
			Budget: c.SnapshotBudget, TurnLimit: c.SnapshotLimit},
	}
	b.Runner = runner.New(b.cfg)
	return b, nil
}

// frontEnds are the protocols courier speaks, the default first.
func frontEnds() []frontend.FrontEnd {
	return []frontend.FrontEnd{protocol.Tags{}, agentspaces.Chat{}}
}

// protocolNames names them, for --protocol.
func protocolNames() []string {
	var names []string
	for _, fe := range frontEnds() {
		names = append(names, fe.Name())
	}
	return names
}

// console returns the text reporter: colour only on a terminal and as the
// color setting allows, progress only on a terminal, requests copied to the
// clipboard with copy on.
func (g *globals) console(root string, out io.Writer) *console.Text {
	o := console.Options{Out: out, Err: g.io.Err, Root: root, Quiet: g.quiet, Progress: g.io.ErrTerminal,
		TokenBudget: g.cfg.TokenBudget, Unattended: g.agentChosen()}
	if filepath.Base(root) == workspace.CourierDir {
		// A project's files are shown as the person, somewhere in it,
		// names them: .courier/inbox/ from its top.
		o.Here, _ = filepath.Abs(".")
	}
	o.Color = g.colour()
	if g.cfg.Copy || g.cfg.Clipboard {
		// The person works in the chat window then, not in the terminal.
		o.Notify = g.notifier()
	}
	var missing error
	if g.cfg.Copy && !o.Unattended {
		cb, err := clipboard.Detect(g.io.Environ)
		if err == nil {
			o.Copier = cb
		}
		missing = err
	}
	text := console.NewText(o)
	if missing != nil {
		text.Warning(noClipboard(missing))
	}
	return text
}

// colour reports whether stdout gets colour: on a terminal, as the color
// setting allows (NO_COLOR and --no-color make it never).
func (g *globals) colour() bool {
	return g.cfg.Color == config.ColorAlways || g.cfg.Color == config.ColorAuto && g.io.OutTerminal
}

// clipboard returns the system clipboard, or nil after reporting (as a
// warning, never an error) why there is none.
func (g *globals) clipboard(rep runner.Reporter) *clipboard.Clipboard {
	cb, err := clipboard.Detect(g.io.Environ)
	if err != nil {
		rep.Warning(noClipboard(err))
		return nil
	}
	return cb
}

// noClipboard says why the clipboard cannot be used, and what to do.
func noClipboard(err error) runner.Warning {
	return runner.Warning{Message: err.Error(), Hint: "copy the outbox by hand (or use 'courier show')"}
}

// sandboxOptions returns the OS sandbox for commands, or nil when it is
// off. The kernel is probed when the first command runs, once a run; the
// layers it refuses, and running as root, are said once a session (see
// sayOnce); that nothing confines commands, every run.
func (g *globals) sandboxOptions(p runner.Paths, rep runner.Reporter) *sandbox.Options {
	if g.cfg.Sandbox == config.SandboxOff {
		return nil
	}
	opts := g.sandboxSettings(p)
	settings := opts
	probe := sync.OnceValue(func() sandbox.Kernel { return g.io.Probe(opts.Caches) })
	var mu sync.Mutex
	said := map[string]bool{} // records said in this run
	opts.Probe = func(id string) sandbox.Kernel {
		s := settings
		s.Kernel = probe()
		mu.Lock()
		defer mu.Unlock()
		if why := s.Kernel.Unconfined; why != "" {
			// Said every run, not once a session: nothing holds commands.
			if !said["unconfined"] {
				said["unconfined"] = true
				msg := why + ": they can do whatever you can, so each RUN_COMMAND waits for your yes"
				if err := sandbox.Check(s); err != nil {
					msg = err.Error() + ", so each RUN_COMMAND is refused"
				}
				rep.Warning(runner.Warning{
					Message: msg,
					Hint:    `'courier sandbox check' says what is missing; sandbox = "off" in courier.toml runs them without asking`,
				})
			}
			return s.Kernel
		}
		if machineRoot() {
			sayOnce(rep, said, p, id, "root", "root\n", runner.Warning{
				Message: "courier runs as root: the commands act as root inside the sandbox, and what they make in the workspace belongs to root",
				Hint:    "run courier as an ordinary user: the sandbox confines commands without any privilege",
			})
		}
		missing := sandbox.Missing(s)
		if len(missing) == 0 || s.Strict {
			return s.Kernel
		}
		names := make([]string, len(missing))
		for i, l := range missing {
			names[i] = l.Name
		}
		list := strings.Join(names, ", ")
		sayOnce(rep, said, p, id, "sandbox-missing", list+"\n", runner.Warning{
			Message: fmt.Sprintf("commands run without %s: %s", list, missing[0].Detail),
			Hint:    `'courier sandbox check' shows what each layer protects; set sandbox = "strict" in courier.toml to refuse commands instead`,
		})
		return s.Kernel
	}
	return &opts
}

// machineRoot reports whether courier runs as the machine's root: user 0,
// which is user 0 outside its user namespace too (in one of its own, as
// 'unshare -r' makes, root is the person who made it).
func machineRoot() bool {
	if os.Geteuid() != 0 {
		return false
	}
	m, err := os.ReadFile("/proc/self/uid_map")
	f := strings.Fields(string(m))
	return err != nil || len(f) < 2 || (f[0] == "0" && f[1] == "0")
}

// sayOnce reports w once a session: not again in this run, nor in a later
// one while the file name in the session's folder holds text, which is
// written when w is said. A record not written means the warning once
// more; a change of text, the warning again.
func sayOnce(rep runner.Reporter, said map[string]bool, p runner.Paths, id, name, text string, w runner.Warning) {
	if said[id+"/"+name] {
		return
	}
	said[id+"/"+name] = true
	record := ""
	if runner.ValidID(id) {
		record = filepath.Join(p.SessionFolder(id), name)
		if before, err := os.ReadFile(record); err == nil && string(before) == text {
			return
		}
	}
	rep.Warning(w)
	if record != "" && os.MkdirAll(filepath.Dir(record), 0o755) == nil {
		_ = os.WriteFile(record, []byte(text), 0o644)
	}
}

// sandboxSettings are the sandbox options before the kernel is probed:
// every courier root of the person hidden (a command could otherwise
// answer for other sessions), their tools shown read-only, their caches
// under the session's layers in ROOT/cache, and the limits.
func (g *globals) sandboxSettings(p runner.Paths) sandbox.Options {
	return sandbox.Options{
		Hide:         p.CourierPlaces(g.io.Getenv),
		Sockets:      sandbox.SocketEnv{RuntimeDir: g.io.Getenv("XDG_RUNTIME_DIR"), SSHAuthSock: g.io.Getenv("SSH_AUTH_SOCK")},
		Home:         g.io.Getenv("HOME"),
		HomeReadable: g.cfg.Home == config.HomeReadable,
		Show:         sandbox.ToolFolders(g.io.Getenv, g.cfg.ReadOnly),
		Caches:       filepath.Join(p.Root, "cache"),
		Tools:        sandbox.PersonCaches(g.io.Getenv),
		Limits:       sandbox.Limits{Processes: g.cfg.MaxProcesses, Memory: g.cfg.MaxMemory},
		NoNetwork:    !g.cfg.Network,
		Strict:       g.cfg.Sandbox == config.SandboxStrict,
	}
}

// approver answers approval questions: yes to all with the yes setting, on
// a terminal by asking, and otherwise not at all (the session waits for
// 'courier approve' or 'courier deny').
func (g *globals) approver(v view) runner.Approver {
	if g.cfg.Yes {
		return runner.Yes{}
	}
	if g.io.InTerminal && g.io.ErrTerminal && !v.json && !v.program {
		return console.NewTerminal(g.io.In, g.io.Err, v.wait)
	}
	return nil
}

// agentChosen reports whether an agent answers the requests instead of a
// person ([agent] name or command, --agent, --agent-command). An empty
// --agent on the command line means a person, whatever courier.toml's
// command says: it is how a person takes a session over by copy and
// paste.
func (g *globals) agentChosen() bool {
	a := g.cfg.Agent
	return a.Name != "" || len(a.Command) > 0 && !(g.set["agent"] && !g.set["agent-command"])
}

// notifier calls the person's attention: a desktop notification where
// notify-send exists and a display is there, else the terminal bell on a
// terminal; nil when neither can be had.
func (g *globals) notifier() func(string) {
	if _, err := exec.LookPath("notify-send"); err == nil && g.desktop() {
		return func(msg string) { desktopRun("notify-send", "--app-name=courier", "courier", msg) }
	}
	if g.io.ErrTerminal {
		return func(string) { fmt.Fprint(g.io.Err, "\a") }
	}
	return nil
}

// desktop reports whether courier runs on a desktop (X or Wayland).
func (g *globals) desktop() bool {
	return g.io.Getenv("DISPLAY") != "" || g.io.Getenv("WAYLAND_DISPLAY") != ""
}

// desktopRun starts a desktop program, at best: never in the workspace,
// where a reply writes, and not waited for.
func desktopRun(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = "/"
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}
