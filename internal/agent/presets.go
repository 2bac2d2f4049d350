package agent

import "slices"

// preset is a coding CLI people already have, run so that it answers one
// request in plain text and exits: the request on stdin, the reply on
// stdout, progress and errors on stderr, and none of its own tools, since
// courier is the one that executes commands.
type preset struct {
	name string
	// needsModel: the program cannot pick a model by itself.
	needsModel bool
	// argv builds the command line; model is "" for the program's default.
	argv func(model string) []string
}

// presets lists every preset. Each entry says which documentation it was
// written against; the tests pin the exact argument list and stdin each
// program receives. What protects the person from settings a reply
// writes into the workspace (hooks, helpers, MCP servers: programs the
// CLI would run outside the sandbox) is the folder the program runs in,
// fresh and outside the workspace (see workFolder); where a CLI has a
// switch that turns project settings off, it is passed too.
var presets = []preset{
	// Claude Code, written against its CLI reference (code.claude.com
	// docs/en/cli-reference) and changelog up to 2.1.240. -p (print mode)
	// with no prompt argument reads the prompt from stdin and prints the
	// answer; --output-format text prints only the final answer;
	// --tools "" removes every built-in tool and --strict-mcp-config with no
	// --mcp-config loads no MCP server, so it cannot act on its own;
	// --no-session-persistence keeps one-off runs out of its session
	// history; --setting-sources user loads the person's settings but no
	// project or local ones (.claude/settings.json, CLAUDE.md). --tools
	// takes several values, so an option must follow it.
	{name: "claude", argv: func(model string) []string {
		argv := []string{"claude", "-p", "--output-format", "text", "--tools", "", "--strict-mcp-config", "--no-session-persistence",
			"--setting-sources", "user"}
		return withFlag(argv, "--model", model)
	}},
	// OpenAI Codex CLI, written against developers.openai.com/codex
	// (noninteractive and cli/reference, codex-cli 0.128). `exec -` reads
	// the prompt from stdin, prints progress on stderr and only the final
	// message on stdout; --skip-git-repo-check because the workspace need
	// not be a Git repository; --ephemeral writes no session files;
	// --sandbox read-only and the shell tools turned off (-c is a global
	// option, features.shell_tool a stable feature key) keep it from acting
	// itself; --color never keeps escape codes out of the output;
	// --ignore-rules (0.122) loads no execpolicy .rules, the person's or a
	// project's. Codex has no switch for a project's .codex/config.toml,
	// which it reads only in projects the person trusts: the fresh folder
	// it runs in is none.
	{name: "codex", argv: func(model string) []string {
		argv := []string{"codex", "exec", "--skip-git-repo-check", "--ephemeral", "--ignore-rules", "--sandbox", "read-only",
			"--color", "never", "-c", "features.shell_tool=false", "-c", "features.unified_exec=false"}
		return append(withFlag(argv, "-m", model), "-")
	}},
	// Gemini CLI, written against docs/cli/cli-reference.md and
	// docs/cli/headless.md of gemini-cli 0.56. -p forces headless mode and
	// its text is appended to stdin, so an empty -p sends exactly the
	// request; --output-format text prints only the answer. Gemini CLI has
	// no switch that removes every tool: in headless mode its policy engine
	// refuses each tool call that needs approval (--approval-mode default,
	// pinned over the person's settings), so it cannot change files or run
	// commands. Nor has it a switch that turns project settings off: an
	// untrusted folder would, but in headless mode Gemini CLI refuses to
	// run in one (0.41 on), so --skip-trust trusts the fresh, empty folder
	// courier runs it in, which holds no .gemini/settings.json or .env.
	{name: "gemini", argv: func(model string) []string {
		argv := []string{"gemini", "--skip-trust", "--approval-mode", "default", "--output-format", "text"}
		return append(withFlag(argv, "-m", model), "-p", "")
	}},
	// Simon Willison's llm, written against llm.datasette.io usage (llm
	// 0.32). `llm prompt` with no prompt argument sends stdin as the prompt
	// and streams the answer to stdout; --no-log keeps courier's requests
	// out of its logs database; it uses tools only when given -T.
	{name: "llm", argv: func(model string) []string {
		return withFlag([]string{"llm", "prompt", "--no-log"}, "-m", model)
	}},
	// Ollama, written against its cmd/cmd.go and docs at v0.33.0. `ollama
	// run MODEL` reads the whole of stdin as the prompt when stdin is not a
	// terminal; --nowordwrap because word wrapping is otherwise turned back
	// on for piped input and would break long lines of code;
	// --hidethinking keeps a thinking model's reasoning out of the reply.
	{name: "ollama", needsModel: true, argv: func(model string) []string {
		return []string{"ollama", "run", "--nowordwrap", "--hidethinking", model}
	}},
}

// withFlag appends flag and value when value is set.
func withFlag(argv []string, flag, value string) []string {
	if value == "" {
		return argv
	}
	return append(argv, flag, value)
}

func findPreset(name string) (preset, bool) {
	i := slices.IndexFunc(presets, func(p preset) bool { return p.name == name })
	if i < 0 {
		return preset{}, false
	}
	return presets[i], true
}
