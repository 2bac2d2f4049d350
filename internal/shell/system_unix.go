//go:build unix

package shell

// systemVars are what programs of the system need besides allowed: none.
var systemVars []string

// shellPath is the shell every command runs in. It is absolute because the
// sandbox launcher executes it without a PATH search.
func shellPath() (string, error) { return "/bin/sh", nil }
