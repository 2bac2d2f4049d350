package agent

import "slices"

// The variables the protocol sets for every run.
const (
	EnvTaskFolder = "TASK_FOLDER"     // the session folder
	EnvRunFolder  = "RUN_FOLDER"      // the run's folder
	EnvProjectID  = "JRUN_PROJECT_ID" // RunContext.ProjectID
	EnvTaskID     = "JRUN_TASK_ID"    // RunContext.TaskID
	EnvRunID      = "JRUN_ID"         // RunContext.RunID
)

// keyVariables are the protocol's API key variables: courier redacts
// their values from everything it writes about a run.
var keyVariables = []string{
	"OPENAI_API_KEY",
	"ANTHROPIC_API_KEY",
	"GEMINI_API_KEY",
	"GOOGLE_API_KEY", // the Gemini CLI's other name for its key
	"PERPLEXITY_API_KEY",
	"XAI_API_KEY",
}

// mergeEnvironment sets overrides over base (os.Environ entries); os/exec
// and lookPath take the last entry of a name.
func mergeEnvironment(base []string, overrides map[string]string) []string {
	out := slices.Clone(base)
	for name, v := range overrides {
		out = append(out, name+"="+v)
	}
	return out
}

// lookupEnv reads a variable as the agent sees it.
func lookupEnv(runCtx *RunContext, getenv func(string) string, name string) string {
	if v, ok := runCtx.Environment[name]; ok {
		return v
	}
	return getenv(name)
}

// minSecretLen is the shortest value treated as a key: local servers take
// any key, and redacting "x" or "ollama" would mangle replies.
const minSecretLen = 8

// secretsOf returns the values of the key variables and of extra.
func secretsOf(runCtx *RunContext, getenv func(string) string, extra ...string) []string {
	var out []string
	for _, name := range slices.Concat(keyVariables, extra) {
		if v := lookupEnv(runCtx, getenv, name); len(v) >= minSecretLen && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
