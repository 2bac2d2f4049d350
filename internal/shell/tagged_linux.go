package shell

import (
	"bytes"
	"os"
	"syscall"
)

// KillTagged stops every process whose environment holds TagVar=tag, the
// leftovers of a command whose courier died, and returns how many. The tag
// proves identity: no process that merely reused a pid is hit.
func KillTagged(tag string) int {
	want := []byte(TagVar + "=" + tag + "\x00")
	n := 0
	eachProcess("environ", func(pid int, env []byte) {
		tagged := bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...))
		if tagged && pid != os.Getpid() && syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	})
	return n
}
