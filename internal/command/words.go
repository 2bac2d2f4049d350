package command

import "fmt"

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

// LineRange names the lines a read asks for, as its result says them:
// " lines 400-464", " from line 400", " lines 1-464", or "" for the whole
// file (0 for a bound not given).
func LineRange(start, end int) string {
	switch {
	case start > 0 && end > 0:
		return fmt.Sprintf(" lines %d-%d", start, end)
	case start > 0:
		return fmt.Sprintf(" from line %d", start)
	case end > 0:
		return fmt.Sprintf(" lines 1-%d", end)
	}
	return ""
}
