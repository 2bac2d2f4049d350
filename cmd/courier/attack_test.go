package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/courier-agent/courier/internal/sandbox"
	"github.com/courier-agent/courier/internal/sandbox/sandboxtest"
)

// scriptCondition answers the scripts' own conditions: [landlock] and
// [namespaces] (what the sandbox needs of the kernel; missing, they fail the
// script unless the person running the tests said that is expected here),
// and [root].
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "landlock":
		if abi, err := sandbox.Available(); abi == 0 {
			if os.Getenv(sandboxtest.SkipEnv) == "1" {
				return false, nil
			}
			return false, fmt.Errorf("the kernel has no landlock (%v); set %s=1 to skip the sandbox scripts", err, sandboxtest.SkipEnv)
		}
		return true, nil
	case "namespaces":
		if k := sandbox.Probe(""); !k.Namespaces {
			if os.Getenv(sandboxtest.NamespacesSkipEnv) == "1" {
				return false, nil
			}
			return false, fmt.Errorf("the kernel refuses the sandbox's namespaces (%s); set %s=1 to skip the scripts that need them", k.NamespacesWhy, sandboxtest.NamespacesSkipEnv)
		}
		return true, nil
	case "root":
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// stopsgrowing FILE... checks that nothing writes to the files any more:
// each exists and, within a few seconds, keeps its size for a whole second
// (the attacks' loops write every 100ms, so a live writer never gets there).
// The grace period is the kernel's: when courier is killed, its launcher
// and then the command's PID namespace are ended by the kernel a moment
// after courier itself is reaped, and a write may land in that moment.
func cmdStopsGrowing(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 || neg {
		ts.Fatalf("usage: stopsgrowing FILE...")
	}
	sizes := func() []int64 {
		s := make([]int64, len(args))
		for i, a := range args {
			info, err := os.Stat(ts.MkAbs(a))
			ts.Check(err)
			s[i] = info.Size()
		}
		return s
	}
	before := sizes()
	deadline := time.Now().Add(5 * time.Second)
	for {
		time.Sleep(time.Second)
		after := sizes()
		grew := -1
		for i := range args {
			if after[i] != before[i] {
				grew = i
				break
			}
		}
		if grew < 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s still grows (%d → %d bytes in a second): a process of the command is alive", args[grew], before[grew], after[grew])
		}
		before = after
	}
}

// noproc TEXT checks that no process on the machine has TEXT in its
// command line or its environment, within a few seconds: a command's
// processes are all gone.
func cmdNoProc(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: noproc TEXT")
	}
	// A process ended by the kernel (the launcher of a killed courier,
	// and with it its namespace) may take a moment on a busy machine to
	// be gone; one that survives stays for good.
	deadline := time.Now().Add(5 * time.Second)
	for {
		pid, where, cmdline := findProc(args[0])
		if pid == "" {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("process %s is alive with %q in its %s: %q", pid, args[0], where, cmdline)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// findProc returns a process other than this one with text in its command
// line or environment, where it was found, and its command line.
func findProc(text string) (pid, where string, cmdline []byte) {
	self := strconv.Itoa(os.Getpid())
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if filepath.Base(d) == self {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			data, err := os.ReadFile(filepath.Join(d, f))
			if err == nil && bytes.Contains(data, []byte(text)) {
				cmdline, _ := os.ReadFile(filepath.Join(d, "cmdline"))
				return filepath.Base(d), f, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})
			}
		}
	}
	return "", "", nil
}

// listen tcp|udp|unix NAME [PATH] listens on 127.0.0.1 (a free port, put in
// the variable NAME) or on the UNIX socket PATH ("@name" is abstract) until
// the script ends, and writes everything that arrives (connections and
// their data, datagrams) to the file NAME.log.
func cmdListen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || (args[0] == "unix") != (len(args) == 3) {
		ts.Fatalf("usage: listen tcp|udp|unix NAME [PATH]")
	}
	kind, name := args[0], args[1]
	logPath := ts.MkAbs(name + ".log")
	ts.Check(os.WriteFile(logPath, nil, 0o644))
	var mu sync.Mutex
	record := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			fmt.Fprintln(f, what)
			f.Close()
		}
	}
	if kind == "udp" {
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		ts.Check(err)
		ts.Defer(func() { pc.Close() })
		ts.Setenv(name, strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port))
		go func() {
			buf := make([]byte, 64<<10)
			for {
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				record("datagram: " + string(buf[:n]))
			}
		}()
		return
	}
	var ln net.Listener
	var err error
	switch kind {
	case "tcp":
		ln, err = net.Listen("tcp4", "127.0.0.1:0")
		ts.Check(err)
		ts.Setenv(name, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	case "unix":
		path := args[2]
		if !strings.HasPrefix(path, "@") {
			path = ts.MkAbs(path)
		}
		ln, err = net.Listen("unix", path)
		ts.Check(err)
	default:
		ts.Fatalf("unknown kind %q", kind)
	}
	ts.Defer(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 64<<10)
				n, _ := c.Read(buf)
				record("connection: " + string(buf[:n]))
			}()
		}
	}()
}

// nowhere TEXT PATH... checks that no file under the paths (and no file
// name) holds TEXT: a secret did not reach the workspace or the outbox.
func cmdNowhere(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: nowhere TEXT PATH...")
	}
	text := []byte(args[0])
	for _, root := range args[1:] {
		err := filepath.WalkDir(ts.MkAbs(root), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.Contains(d.Name(), args[0]) {
				ts.Fatalf("%q is in the name of %s", args[0], p)
			}
			if !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if bytes.Contains(data, text) {
				ts.Fatalf("%q is in %s", args[0], p)
			}
			return nil
		})
		ts.Check(err)
	}
}
