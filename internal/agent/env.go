package agent

import (
	"maps"
	"slices"
	"strings"
)

// The variables the protocol sets for every run.
const (
	EnvTaskFolder = "TASK_FOLDER"     // the session folder
	EnvRunFolder  = "RUN_FOLDER"      // the run's folder
	EnvProjectID  = "JRUN_PROJECT_ID" // RunContext.ProjectID
	EnvTaskID     = "JRUN_TASK_ID"    // RunContext.TaskID
	EnvRunID      = "JRUN_ID"         // RunContext.RunID
)

// keyVariables are the variables the protocol names for API keys. Their
// values reach the agent through its environment (or, for the openai
// backend, the Authorization header) and nowhere else: courier redacts
// them from everything it writes about a run.
var keyVariables = []string{
	"OPENAI_API_KEY",
	"ANTHROPIC_API_KEY",
	"GEMINI_API_KEY",
	"GOOGLE_API_KEY", // the Gemini CLI's other name for its key
	"PERPLEXITY_API_KEY",
	"XAI_API_KEY",
}

// mergeEnvironment returns base ("NAME=value" entries, like os.Environ)
// with the overrides set, as the protocol merges a run's Environment over
// the process environment: an override replaces every entry of its name.
func mergeEnvironment(base []string, overrides map[string]string) []string {
	out := make([]string, 0, len(base)+len(overrides))
	for _, kv := range base {
		name, _, ok := strings.Cut(kv, "=")
		if _, replaced := overrides[name]; ok && name != "" && !replaced {
			out = append(out, kv)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		out = append(out, name+"="+overrides[name])
	}
	return out
}

// lookupEnv reads a variable as the agent sees it: the run's Environment
// first, then the process environment (getenv).
func lookupEnv(runCtx *RunContext, getenv func(string) string, name string) string {
	if v, ok := runCtx.Environment[name]; ok {
		return v
	}
	return getenv(name)
}

// minSecretLen is the shortest value treated as a key. Local servers
// accept any key and people write "x" or "ollama"; redacting such values
// would mangle replies without protecting anything.
const minSecretLen = 8

// secretsOf returns the values of the key variables (and of extra, the
// variable an openai backend reads its key from) as the run sees them.
func secretsOf(runCtx *RunContext, getenv func(string) string, extra ...string) []string {
	var out []string
	for _, name := range slices.Concat(keyVariables, extra) {
		v := lookupEnv(runCtx, getenv, name)
		if len(v) >= minSecretLen && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
