package agent

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

// presets lists every preset, each written against the documentation it
// names; the tests pin the argument list and stdin of each. What protects
// the person from settings a reply writes into the workspace (hooks,
// helpers, MCP servers: programs the CLI would run outside the sandbox) is
// the fresh folder outside the workspace it runs in (see workFolder);
// where a CLI has a switch that turns project settings off, it is passed
// too.
var presets = []preset{
	// Claude Code (CLI reference, changelog up to 2.1.240): -p without a
	// prompt reads stdin; --tools "" and --strict-mcp-config without
	// --mcp-config leave it no tool to act with; --setting-sources user
	// loads no project or local settings. --tools takes several values, so
	// an option must follow it.
	{name: "claude", argv: func(model string) []string {
		argv := []string{"claude", "-p", "--output-format", "text", "--tools", "", "--strict-mcp-config", "--no-session-persistence",
			"--setting-sources", "user"}
		return withFlag(argv, "--model", model)
	}},
	// OpenAI Codex CLI (developers.openai.com/codex, codex-cli 0.128):
	// `exec -` reads stdin and prints only the final message on stdout;
	// read-only sandbox and the shell tools off keep it from acting;
	// --ignore-rules loads no execpolicy rules. It has no switch for a
	// project's .codex/config.toml, which it reads only in trusted
	// projects: the fresh folder is none.
	{name: "codex", argv: func(model string) []string {
		argv := []string{"codex", "exec", "--skip-git-repo-check", "--ephemeral", "--ignore-rules", "--sandbox", "read-only",
			"--color", "never", "-c", "features.shell_tool=false", "-c", "features.unified_exec=false"}
		return append(withFlag(argv, "-m", model), "-")
	}},
	// Gemini CLI (cli-reference.md and headless.md of 0.56): -p "" adds
	// nothing to stdin and forces headless mode, where --approval-mode
	// default refuses every tool call needing approval. It has no switch
	// for project settings and refuses untrusted folders headless, so
	// --skip-trust trusts the fresh, empty folder it runs in.
	{name: "gemini", argv: func(model string) []string {
		argv := []string{"gemini", "--skip-trust", "--approval-mode", "default", "--output-format", "text"}
		return append(withFlag(argv, "-m", model), "-p", "")
	}},
	// llm (llm.datasette.io, 0.32): `llm prompt` sends stdin; --no-log
	// keeps courier's requests out of its database; no tools without -T.
	{name: "llm", argv: func(model string) []string {
		return withFlag([]string{"llm", "prompt", "--no-log"}, "-m", model)
	}},
	// Ollama (cmd/cmd.go at v0.33.0): `run` reads all of a piped stdin;
	// --nowordwrap keeps long lines of code whole; --hidethinking keeps a
	// thinking model's reasoning out of the reply.
	{name: "ollama", needsModel: true, argv: func(model string) []string {
		return []string{"ollama", "run", "--nowordwrap", "--hidethinking", model}
	}},
}

func withFlag(argv []string, flag, value string) []string {
	if value == "" {
		return argv
	}
	return append(argv, flag, value)
}
