package shell

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// allowed are the variables a command gets from courier's environment:
// what programs need to be found and to speak the person's language and
// time zone, and where toolchains are installed. Everything else (tokens,
// keys, database URLs, agent sockets, proxies with passwords) stays out,
// whatever its name, unless keep_env names it: a command written by an LLM
// could print what it gets into the output that goes back to the chat.
var allowed = append([]string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ",
	"GOROOT", "GOTOOLCHAIN", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "JAVA_HOME",
	"PYENV_ROOT", "PYENV_VERSION", "NVM_DIR",
}, systemVars...)

// nonInteractive are set in every command's environment so that nothing
// waits for a person: the command has no terminal and no stdin, so a prompt
// or a pager would only hang until the timeout.
//
// CI=true is set because many tools (npm, yarn, jest/react-scripts watch
// mode, vitest, husky, interactive installers) use it to skip prompts, watch
// modes and spinners; the cost is that a few tools turn stricter in CI (for
// example react-scripts treats build warnings as errors), which the LLM can
// see in the output and override with the command's env. NO_COLOR and
// TERM=dumb keep escape codes out of the output the LLM reads.
var nonInteractive = [][2]string{
	{"PAGER", "cat"},
	{"GIT_PAGER", "cat"},
	{"GIT_TERMINAL_PROMPT", "0"},
	{"GCM_INTERACTIVE", "never"},
	{"EDITOR", "false"},
	{"VISUAL", "false"},
	{"GIT_EDITOR", "false"},
	{"DEBIAN_FRONTEND", "noninteractive"},
	{"PIP_NO_INPUT", "1"},
	{"CI", "true"},
	{"NO_COLOR", "1"},
	{"TERM", "dumb"},
}

// AllowedVars lists the names and globs of the variables commands get
// from courier's environment, besides keep_env.
func AllowedVars() []string { return slices.Clone(allowed) }

// DefaultVars lists the non-interactive settings every command gets, as
// NAME=value.
func DefaultVars() []string {
	out := make([]string, len(nonInteractive))
	for i, d := range nonInteractive {
		out[i] = d[0] + "=" + d[1]
	}
	return out
}

// Environ returns a command's environment: the variables of base ("NAME=
// value" entries) that are allow-listed or that keep names (exact names or
// globs, case-insensitive); then tools (courier's tool caches), the
// non-interactive defaults (PAGER=cat, GIT_TERMINAL_PROMPT=0, EDITOR=false,
// CI=true, ...) and extra (the command's own env), each replacing earlier
// values of the same names.
func Environ(base, keep []string, tools, extra map[string]string) []string {
	out := make([]string, 0, len(allowed)+len(tools)+len(nonInteractive)+len(extra))
	for _, kv := range base {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if matchAny(name, allowed) || matchAny(name, keep) {
			out = append(out, kv)
		}
	}
	defaults := make(map[string]string, len(nonInteractive))
	for _, d := range nonInteractive {
		defaults[d[0]] = d[1]
	}
	return mergeEnv(mergeEnv(mergeEnv(out, tools), defaults), extra)
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
	for _, g := range globs {
		g = strings.ToUpper(g)
		if g == upper {
			return true
		}
		if ok, err := path.Match(g, upper); err == nil && ok {
			return true
		}
	}
	return false
}

// mergeEnv returns env with extra's entries set, replacing earlier values of
// the same names. Names are applied in sorted order so the result does not
// depend on map iteration.
func mergeEnv(env []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return env
	}
	out := make([]string, 0, len(env)+len(extra))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, replaced := extra[name]; !replaced {
			out = append(out, kv)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, name+"="+extra[name])
	}
	return out
}
