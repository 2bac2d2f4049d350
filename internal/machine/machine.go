// Package machine describes, for the first request, the machine the LLM's
// commands will run on: the operating system and shell, which common tools
// exist and their versions, whether the workspace is a git repository, and
// the limits every command runs under. It spares the LLM the turns it would
// spend finding these out. The probe itself runs as a command does: in the
// sandbox, with the commands' environment, so it reports what commands see.
// What the tools say is kept in the person's cache folder, so that a
// request does not wait for slow version shims every time.
package machine

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/shell"
)

var tools = []string{"git", "go", "python3", "pip", "node", "npm", "make", "gcc", "cargo", "java", "docker"}

// probeTime bounds the probe a request waits for: a tool slow to say its
// version is left out. What the tools said is probed again in the
// background once refreshAfter old (pyenv's shims switch versions without
// a change of PATH), within refreshTime, which nobody waits for.
const (
	probeTime    = 2 * time.Second
	refreshAfter = 10 * time.Minute
	refreshTime  = 20 * time.Second
)

// Limits are what every command runs under.
type Limits struct {
	Timeout   time.Duration
	MaxOutput int
	NoNetwork bool
}

// Description is what the probe found.
type Description struct {
	OS         string
	Tools      []string // "name (version)"
	Absent     []string
	Late       []string // tools that did not say their version in time
	Git        bool     // the workspace is a git repository
	Branch     string
	GitStatus  []string // git status --short, capped
	MoreStatus int      // status lines left out
	Limits     Limits
}

const maxStatus = 20 // git status lines shown

// probes asks every tool at once, each finding a tab-separated line
// written in one go, and the system; run it with "wait" after. The tools
// are asked from /: what they say is kept for the machine, and no file of
// a project (a .python-version) has a say.
const probes = `
probe() {
	if command -v "$1" >/dev/null 2>&1; then
		v=$(cd / && "$@" 2>&1 </dev/null | sed -n '1{s/[[:cntrl:]]//g;p;}')
		printf 'tool\t%s\t%s\n' "$1" "$v"
	else
		printf 'absent\t%s\n' "$1"
	fi
}
probe git --version & probe go version & probe python3 --version &
probe pip --version & probe node --version & probe npm --version &
probe make --version & probe gcc --version & probe cargo --version &
probe java -version & probe docker --version &
printf 'os\t%s\n' "$(uname -srm 2>/dev/null)"
`

const gitScript = `
if command -v git >/dev/null 2>&1 && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	printf 'branch\t%s\n' "$(git --no-optional-locks rev-parse --abbrev-ref HEAD 2>/dev/null)"
	git --no-optional-locks -c core.fsmonitor= status --short 2>/dev/null | sed 's/^/status\t/'
fi
`

// Probe describes the machine for commands run as spec says (its Command,
// Timeout and MaxOutput are set here). With what the tools said cached, a
// request waits only for the workspace's repository, if there is one.
func Probe(ctx context.Context, spec shell.Spec, limits Limits) Description {
	d := Description{OS: runtime.GOOS, Limits: limits}
	cache, key := toolsCache(spec)
	known, age, ok := readTools(cache, key)
	if ok {
		if age > refreshAfter {
			go func() { writeTools(cache, key, run(context.Background(), spec, probes+"wait\n", refreshTime)) }()
		}
		if inRepository(spec.Dir) {
			known += run(ctx, spec, gitScript, probeTime)
		}
		d.read(known)
	} else {
		out := run(ctx, spec, probes+gitScript+"wait\n", probeTime)
		writeTools(cache, key, out)
		d.read(out)
	}
	return d
}

// inRepository reports whether dir or a folder above it holds .git; if
// none does, no command need run.
func inRepository(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

func run(ctx context.Context, spec shell.Spec, script string, limit time.Duration) string {
	spec.Command, spec.Timeout, spec.MaxOutput = script, limit, maxProbe
	res, err := shell.Run(ctx, spec)
	if err != nil {
		return ""
	}
	return res.Output
}

const maxProbe = 64 << 10 // the probe's output

func (d *Description) read(out string) {
	said := map[string]string{} // by tool: its version, "" when absent
	for _, line := range strings.Split(out, "\n") {
		kind, rest, _ := strings.Cut(line, "\t")
		switch kind {
		case "tool":
			name, version, _ := strings.Cut(rest, "\t")
			said[name] = fmt.Sprintf("%s (%s)", name, strings.TrimSpace(version))
		case "absent":
			said[rest] = ""
		case "branch":
			d.Git, d.Branch = true, rest
		case "status":
			if len(d.GitStatus) < maxStatus {
				d.GitStatus = append(d.GitStatus, rest)
			} else {
				d.MoreStatus++
			}
		case "os":
			if rest != "" {
				d.OS = rest
			}
		}
	}
	for _, t := range tools {
		v, ok := said[t]
		switch {
		case !ok:
			d.Late = append(d.Late, t)
		case v == "":
			d.Absent = append(d.Absent, t)
		default:
			d.Tools = append(d.Tools, v)
		}
	}
}

// toolsCache is the file that keeps what the tools said, and the key it
// holds for: the commands' PATH with the time each of its folders last
// changed (installing a tool changes it), and whether commands run
// sandboxed. "" when the cache folder is missing or inside the workspace,
// where a reply could write it.
func toolsCache(spec shell.Spec) (string, string) {
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) || spec.Dir == "" {
		return "", ""
	}
	dir = filepath.Join(dir, "courier")
	if rel, err := filepath.Rel(spec.Dir, dir); err != nil || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
		return "", ""
	}
	path := ""
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%t\n", path, spec.Sandbox != nil)
	for _, folder := range filepath.SplitList(path) {
		if info, err := os.Stat(folder); err == nil {
			fmt.Fprintf(h, "%s\t%d\n", folder, info.ModTime().UnixNano())
		}
	}
	return filepath.Join(dir, "tools"), fmt.Sprintf("%x", h.Sum(nil)[:12])
}

func readTools(cache, key string) (string, time.Duration, bool) {
	info, err := os.Stat(cache)
	data, err2 := os.ReadFile(cache)
	if err != nil || err2 != nil {
		return "", 0, false
	}
	lines, ok := strings.CutPrefix(string(data), key+"\n")
	return lines, time.Since(info.ModTime()), ok
}

// writeTools keeps the tools' and the system's lines of out under key,
// at best: without, the next request is only slower.
func writeTools(cache, key, out string) {
	if cache == "" || out == "" {
		return
	}
	var b strings.Builder
	b.WriteString(key + "\n")
	for _, line := range strings.Split(out, "\n") {
		if kind, _, _ := strings.Cut(line, "\t"); kind == "tool" || kind == "absent" || kind == "os" {
			b.WriteString(line + "\n")
		}
	}
	if os.MkdirAll(filepath.Dir(cache), 0o700) == nil {
		_ = atomicfile.Write(cache, []byte(b.String()), 0o600)
	}
}

// Text is the description as the request shows it.
func (d Description) Text(words command.Words) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Operating system: %s; commands run with /bin/sh -c\n", d.OS)
	if len(d.Tools) > 0 {
		fmt.Fprintf(&b, "- Tools: %s\n", strings.Join(d.Tools, "; "))
	}
	if len(d.Absent) > 0 {
		fmt.Fprintf(&b, "- Not installed: %s\n", strings.Join(d.Absent, ", "))
	}
	if len(d.Late) > 0 {
		fmt.Fprintf(&b, "- Not checked (too slow to answer): %s\n", strings.Join(d.Late, ", "))
	}
	switch {
	case !d.Git:
		b.WriteString("- The workspace is not a git repository\n")
	case len(d.GitStatus) == 0:
		fmt.Fprintf(&b, "- The workspace is a git repository on branch %s, with no uncommitted changes\n", d.Branch)
	default:
		fmt.Fprintf(&b, "- The workspace is a git repository on branch %s; git status --short:\n", d.Branch)
		for _, l := range d.GitStatus {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		if d.MoreStatus > 0 {
			fmt.Fprintf(&b, "    ... and %s\n", human.Count(d.MoreStatus, "more line", ""))
		}
	}
	l := d.Limits
	limit := "no time limit"
	if l.Timeout > 0 {
		limit = fmt.Sprintf("a time limit of %s (more with %s)", human.Duration(l.Timeout), words.MoreTime())
	}
	fmt.Fprintf(&b, "- Each %s has %s; its output is capped at %s characters, keeping the head and the tail; %s; there is no stdin\n",
		words.Name(command.RunCommand), limit, human.Thousands(l.MaxOutput), words.Output())
	if l.NoNetwork {
		b.WriteString("- Commands have no network: downloads and package installs from the internet fail\n")
	} else {
		b.WriteString("- Commands may use the network\n")
	}
	return b.String()
}
