package cli

import (
	"bytes"
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
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/workspace"
)

// view is how a command shows what happens, and uses courier's folders.
type view struct {
	use  use
	json bool
	// wait is what the terminal's "w" answer means for the command.
	wait runner.Answer
	// program: stdout is for a program, the console writes to stderr.
	program bool
}

// built is a runner, and its text console (nil with JSON).
type built struct {
	*runner.Runner
	text *console.Text
	// cfg is what the runner was built from (serve builds more from it).
	cfg runner.Config
}

// runner builds the runner a command uses.
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

// console returns the text reporter: colour and progress only on a
// terminal, requests copied to the clipboard with copy on.
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

// colour reports whether stdout gets colour (NO_COLOR, --no-color: never).
func (g *globals) colour() bool {
	return g.cfg.Color == config.ColorAlways || g.cfg.Color == config.ColorAuto && g.io.OutTerminal
}

// noClipboard says why the clipboard cannot be used, and what to do.
func noClipboard(err error) runner.Warning {
	return runner.Warning{Message: err.Error(), Hint: "copy the outbox by hand (or use 'courier show')"}
}

// sandboxOptions returns the OS sandbox for commands (nil: off). The
// kernel is probed at the first command; the layers it refuses, and
// running as root, are said once a session, that nothing confines
// commands every run.
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
				rep.Warning(runner.Warning{Message: msg, Hint: `'courier sandbox check' says what is missing; sandbox = "off" in courier.toml runs them without asking`})
			}
			return s.Kernel
		}
		if machineRoot() {
			sayOnce(rep, said, p, id, "root", "root\n", runner.Warning{Message: "courier runs as root: the commands act as root inside the sandbox, and what they make in the workspace belongs to root", Hint: "run courier as an ordinary user: the sandbox confines commands without any privilege"})
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
		sayOnce(rep, said, p, id, "sandbox-missing", list+"\n", runner.Warning{Message: fmt.Sprintf("commands run without %s: %s", list, missing[0].Detail), Hint: `'courier sandbox check' shows what each layer protects; set sandbox = "strict" in courier.toml to refuse commands instead`})
		return s.Kernel
	}
	return &opts
}

// machineRoot reports whether courier runs as the machine's root, not
// root of a user namespace of its own ('unshare -r').
func machineRoot() bool {
	if os.Geteuid() != 0 {
		return false
	}
	m, err := os.ReadFile("/proc/self/uid_map")
	f := strings.Fields(string(m))
	return err != nil || len(f) < 2 || (f[0] == "0" && f[1] == "0")
}

// sayOnce reports w once a session: again only when the file name in the
// session's folder, written when w is said, does not hold text.
func sayOnce(rep runner.Reporter, said map[string]bool, p runner.Paths, id, name, text string, w runner.Warning) {
	if said[id+"/"+name] {
		return
	}
	said[id+"/"+name] = true
	record := ""
	if history.ValidID(id) {
		record = filepath.Join(history.Store{Dir: p.Sessions}.Folder(id), name)
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
// every courier root hidden (a command could answer for other sessions),
// the person's tools read-only, caches in layers under ROOT/cache.
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

// approver answers questions: yes with the yes setting, on a terminal by
// asking, else not at all (the session waits for 'courier approve').
func (g *globals) approver(v view) runner.Approver {
	if g.cfg.Yes {
		return runner.Yes{}
	}
	if g.io.InTerminal && g.io.ErrTerminal && !v.json && !v.program {
		return console.NewTerminal(g.io.In, g.io.Err, v.wait)
	}
	return nil
}

// agentChosen reports whether an agent answers the requests. An empty
// --agent means a person, whatever courier.toml's command says: so a
// person takes a session over.
func (g *globals) agentChosen() bool {
	a := g.cfg.Agent
	return a.Name != "" || len(a.Command) > 0 && !(g.set["agent"] && !g.set["agent-command"])
}

// notifier calls the person's attention: a desktop notification, else the
// terminal bell, else nil.
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

// desktopRun starts a desktop program, not in the workspace (where a reply
// writes), not waited for.
func desktopRun(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = "/"
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

// The next steps courier prints ('courier watch 3f9a1c2e') are written as
// the person runs courier, with the --root and --workspace they gave.

// program is how the person started courier: as os.Args[0], or for a
// binary 'go run' built, 'go run ./cmd/courier' from the clone's top,
// else courier.
func program(arg0, cwd string) string {
	switch {
	case arg0 == "":
		return "courier"
	case strings.Contains(filepath.ToSlash(arg0), "/go-build"):
		if _, err := os.Stat(filepath.Join(cwd, "cmd", "courier", "main.go")); err == nil {
			return "go run ./cmd/courier"
		}
		return "courier"
	}
	return shellWord(arg0)
}

// courier is the command line that starts courier as this one was.
func (g *globals) courier() string {
	words := []string{program(g.io.Program, ".")}
	for _, f := range []struct{ flag, dir string }{{"--root", g.root}, {"--workspace", g.workspace}} {
		if f.dir == "" {
			continue
		}
		if abs, err := filepath.Abs(f.dir); err == nil {
			words = append(words, f.flag, shellWord(abs))
		}
	}
	return strings.Join(words, " ")
}

// shellWord quotes s for a shell, in double quotes: steps are in single.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%") == "" {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(s) + `"`
}

// stepsWriter says the next steps ('courier ...') in text as the person
// runs courier; never for a request, a diff or JSON.
type stepsWriter struct {
	w io.Writer
	g *globals
}

func (s stepsWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("'courier ")) {
		return s.w.Write(p)
	}
	if prog := s.g.courier(); prog != "courier" {
		if _, err := s.w.Write(bytes.ReplaceAll(p, []byte("'courier "), []byte("'"+prog+" "))); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return s.w.Write(p)
}
