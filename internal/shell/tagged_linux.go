package shell

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// TagVar is the variable that names a command in its environment. Every
// process the command starts inherits it, so a command left running by a
// courier that was killed can still be found and stopped.
const TagVar = "COURIER_COMMAND"

// KillTagged stops every process whose environment holds TagVar=tag, the
// leftovers of a command whose courier died, and returns how many. The tag
// proves identity: no process that merely reused a pid is hit.
func KillTagged(tag string) int {
	want := []byte(TagVar + "=" + tag + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		if bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}
