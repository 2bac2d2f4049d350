package shell

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// allowed are the variables a command gets from courier's environment:
// to find programs, speak the person's language and find toolchains. The
// rest (tokens, keys, sockets...) stays out unless keep_env names it: a
// command could print it into the output that goes back to the chat.
var allowed = append([]string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ",
	"GOROOT", "GOTOOLCHAIN", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "JAVA_HOME",
	"PYENV_ROOT", "PYENV_VERSION", "NVM_DIR",
}, systemVars...)

// nonInteractive are set for every command so that nothing waits for a
// person: with no terminal and no stdin a prompt or pager only hangs. CI
// makes npm, jest, vitest and installers skip prompts and watch modes (a
// few turn stricter, which the LLM sees and can override); NO_COLOR and
// TERM=dumb keep escape codes out of the output.
var nonInteractive = []string{
	"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never",
	"EDITOR=false", "VISUAL=false", "GIT_EDITOR=false", "DEBIAN_FRONTEND=noninteractive",
	"PIP_NO_INPUT=1", "CI=true", "NO_COLOR=1", "TERM=dumb",
}

// AllowedVars lists the names and globs of the variables commands get
// from courier's environment, besides keep_env.
func AllowedVars() []string { return slices.Clone(allowed) }

// DefaultVars lists the non-interactive settings every command gets, as
// NAME=value.
func DefaultVars() []string { return slices.Clone(nonInteractive) }

// Environ returns a command's environment: base's variables that are
// allow-listed or that keep names (globs, ignoring case), then tools,
// nonInteractive and extra, each replacing earlier values of a name.
func Environ(base, keep []string, tools, extra map[string]string) []string {
	set := map[string]string{}
	maps.Copy(set, tools)
	for _, d := range nonInteractive {
		name, value, _ := strings.Cut(d, "=")
		set[name] = value
	}
	maps.Copy(set, extra)
	var out []string
	for _, kv := range base {
		name, _, ok := strings.Cut(kv, "=")
		if _, replaced := set[name]; ok && name != "" && !replaced && (matchAny(name, allowed) || matchAny(name, keep)) {
			out = append(out, kv)
		}
	}
	// Sorted, so that the result is the same every time.
	for _, name := range slices.Sorted(maps.Keys(set)) {
		out = append(out, name+"="+set[name])
	}
	return out
}

// lookup returns a function reading env's variables.
func lookup(env []string) func(string) string {
	return func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
}

// matchAny reports whether name matches one of the globs, ignoring case. A
// malformed glob matches only the identical name.
func matchAny(name string, globs []string) bool {
	upper := strings.ToUpper(name)
	return slices.ContainsFunc(globs, func(g string) bool {
		g = strings.ToUpper(g)
		ok, err := path.Match(g, upper)
		return g == upper || err == nil && ok
	})
}
