package shell

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// secretPatterns are globs (matched case-insensitively on the upper-cased
// name) of variables that commonly hold credentials. A command written by an
// LLM has no business reading them: it could print them into the output that
// goes back to the chat.
var secretPatterns = []string{
	"*_API_KEY", "*_APIKEY", "API_KEY", "APIKEY",
	"*_TOKEN", "TOKEN", "*_TOKEN_*",
	"*_SECRET", "SECRET", "*_SECRET_*",
	"*PASSWORD*", "*PASSWD*", "*PASSPHRASE*",
	"*_CREDENTIALS", "*_CREDENTIAL",
	"*_PRIVATE_KEY", "*_ACCESS_KEY", "*_ACCESS_KEY_ID",
	"*_CONNECTION_STRING",
	"AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_STORAGE_KEY",
	// Agent sockets let a command act as the person (push with their SSH
	// key, sign with their GPG key).
	"SSH_AUTH_SOCK", "GPG_AGENT_INFO",
}

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

// FilterEnv returns env ("NAME=value" entries) without the variables that
// look like secrets, except those whose name matches keep (exact names or
// globs, case-insensitive), and with the non-interactive defaults set
// (PAGER=cat, GIT_TERMINAL_PROMPT=0, EDITOR=false, CI=true, ...), replacing
// any value env had for them.
func FilterEnv(env []string, keep []string) []string {
	out := make([]string, 0, len(env)+len(nonInteractive))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if isDefault(name) {
			continue
		}
		if matchAny(name, secretPatterns) && !matchAny(name, keep) {
			continue
		}
		out = append(out, kv)
	}
	for _, d := range nonInteractive {
		out = append(out, d[0]+"="+d[1])
	}
	return out
}

func isDefault(name string) bool {
	for _, d := range nonInteractive {
		if d[0] == name {
			return true
		}
	}
	return false
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
