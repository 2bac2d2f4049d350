// Package machine describes, for the first request, the machine the LLM's
// commands will run on: the operating system and shell, which common tools
// exist and their versions, whether the workspace is a git repository, and
// the limits every command runs under. It spares the LLM the turns it would
// spend finding these out. The probe itself runs as a command does: in the
// sandbox, with the commands' environment, so it reports what commands see.
package machine

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/shell"
)

// tools are the programs whose presence and version the probe reports.
var tools = []string{"git", "go", "python3", "pip", "node", "npm", "make", "gcc", "cargo", "java", "docker"}

// probeTime bounds the whole probe: a tool that is slow to say its version
// is left out rather than keeping the person waiting.
const probeTime = 2 * time.Second

// Limits are what every command runs under.
type Limits struct {
	Timeout   time.Duration
	MaxOutput int
	// NoNetwork is set when commands have no network.
	NoNetwork bool
}

// Tool is a program found on the commands' PATH.
type Tool struct {
	Name    string
	Version string
}

// Description is what the probe found.
type Description struct {
	OS     string
	Shell  string
	Tools  []Tool
	Absent []string
	// Late are the tools that did not say their version in time.
	Late []string
	// Git is set when the workspace is a git repository.
	Git       bool
	Branch    string
	GitStatus []string // git status --short, capped
	// MoreStatus counts the status lines left out.
	MoreStatus int
	Limits     Limits
}

// maxStatus caps the git status lines shown.
const maxStatus = 20

// script probes every tool at once (each in the background) and the git
// repository; each finding is one tab-separated line, written in one go.
const script = `
probe() {
	if command -v "$1" >/dev/null 2>&1; then
		v=$("$@" 2>&1 </dev/null | sed -n '1{s/[[:cntrl:]]//g;p;}')
		printf 'tool\t%s\t%s\n' "$1" "$v"
	else
		printf 'absent\t%s\n' "$1"
	fi
}
probe git --version & probe go version & probe python3 --version &
probe pip --version & probe node --version & probe npm --version &
probe make --version & probe gcc --version & probe cargo --version &
probe java -version & probe docker --version &
if command -v git >/dev/null 2>&1 && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	printf 'branch\t%s\n' "$(git --no-optional-locks rev-parse --abbrev-ref HEAD 2>/dev/null)"
	git --no-optional-locks -c core.fsmonitor= status --short 2>/dev/null | sed 's/^/status\t/'
fi
printf 'os\t%s\n' "$(uname -srm 2>/dev/null)"
wait
`

// Probe describes the machine for commands run as spec says (its Command,
// Timeout and MaxOutput are set here).
func Probe(ctx context.Context, spec shell.Spec, limits Limits) Description {
	d := Description{OS: runtime.GOOS, Shell: "/bin/sh", Limits: limits}
	spec.Command = script
	spec.Timeout = probeTime
	spec.MaxOutput = 64 << 10
	res, err := shell.Run(ctx, spec)
	if err != nil {
		return d
	}
	found := map[string]bool{}
	for _, line := range strings.Split(res.Output, "\n") {
		kind, rest, _ := strings.Cut(line, "\t")
		switch kind {
		case "tool":
			name, version, _ := strings.Cut(rest, "\t")
			d.Tools = append(d.Tools, Tool{Name: name, Version: strings.TrimSpace(version)})
			found[name] = true
		case "absent":
			found[rest] = true
			d.Absent = append(d.Absent, rest)
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
	sort.Slice(d.Tools, func(i, j int) bool { return index(d.Tools[i].Name) < index(d.Tools[j].Name) })
	sort.Slice(d.Absent, func(i, j int) bool { return index(d.Absent[i]) < index(d.Absent[j]) })
	for _, t := range tools {
		if !found[t] {
			d.Late = append(d.Late, t)
		}
	}
	return d
}

func index(name string) int {
	for i, t := range tools {
		if t == name {
			return i
		}
	}
	return len(tools)
}

// Text is the description as the request shows it, one fact a line.
func (d Description) Text(words command.Words) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Operating system: %s; commands run with %s -c\n", d.OS, d.Shell)
	if len(d.Tools) > 0 {
		var ts []string
		for _, t := range d.Tools {
			ts = append(ts, fmt.Sprintf("%s (%s)", t.Name, t.Version))
		}
		fmt.Fprintf(&b, "- Tools: %s\n", strings.Join(ts, "; "))
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
