package command

// Words are a front end's names for courier's commands. The engine and the
// code that shows files advise the LLM in results and notices ("change it
// with a RUN_COMMAND instead"); they take the names from the session's
// front end, so that only a front end knows its protocol's syntax.
type Words interface {
	// Name names a command of type t as a noun: "RUN_COMMAND" in the tag
	// protocol, "shell operation" in the JSON one.
	Name(t Type) string
	// ReadLines is the command that shows lines from to to of a file.
	ReadLines(path string, from, to int) string
	// MoreTime says how a command asks for a longer time limit.
	MoreTime() string
	// Output says how a command's stdout and stderr come back.
	Output() string
}
