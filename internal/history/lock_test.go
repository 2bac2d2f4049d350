package history

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lockChildEnv makes the re-executed test binary a lock holder: it takes
// the lock named in the variable ("dir:id"), says "locked" and waits for
// its standard input to close, or for its death.
const lockChildEnv = "SESSION_TEST_LOCK_HOLDER"

func holdLock(spec string) int {
	dir, id, _ := strings.Cut(spec, ":")
	l, err := Store{Dir: dir}.Lock(id, "courier watch")
	if err != nil {
		fmt.Println("lock failed:", err)
		return 1
	}
	defer l.Unlock()
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

func TestLockIsExclusive(t *testing.T) {
	s := newStore(t)
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := s.Lock("0000000a", "courier run")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Lock("0000000a", "courier watch")
	if locked := (*LockedError)(nil); !errors.As(err, &locked) {
		t.Fatalf("second Lock = %v, want a LockedError", err)
	}
	for _, want := range []string{"0000000a", "courier run", fmt.Sprintf("pid %d", os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Holder == nil || locked.Holder.Command != "courier run" || locked.Holder.PID != os.Getpid() {
		t.Errorf("error %#v does not describe the holder", err)
	}
	if h, held := s.Holder("0000000a"); !held || h.Command != "courier run" {
		t.Errorf("Holder = %+v, %v; want courier run, held", h, held)
	}
	l.Note("waiting for approval of 'rm -rf build'")
	if h, _ := s.Holder("0000000a"); h.Doing != "waiting for approval of 'rm -rf build'" {
		t.Errorf("Holder after Note = %+v", h)
	}
	l.Note("waiting")
	if h, _ := s.Holder("0000000a"); h.Doing != "waiting" {
		t.Errorf("a shorter note after a longer one reads %+v", h)
	}

	other, err := s.Lock("0000000b", "courier run")
	if err != nil {
		t.Fatalf("lock of another session = %v", err)
	}
	other.Unlock()

	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("second Unlock = %v", err)
	}
	var none *Lock
	if err := none.Unlock(); err != nil {
		t.Errorf("Unlock of nil = %v", err)
	}
	again, err := s.Lock("0000000a", "courier watch")
	if err != nil {
		t.Fatalf("Lock after Unlock = %v", err)
	}
	again.Unlock()
}

func TestLockMissingFolder(t *testing.T) {
	s := newStore(t)
	if _, err := s.Lock("0000000a", "courier run"); err == nil || errors.As(err, new(*LockedError)) {
		t.Errorf("Lock with no sessions folder = %v", err)
	}
}

// TestLockReleasedWhenHolderIsKilled has another process take the lock and
// die by SIGKILL, which runs no cleanup: the kernel must release it.
func TestLockReleasedWhenHolderIsKilled(t *testing.T) {
	s := newStore(t)
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), lockChildEnv+"="+s.Dir+":0000000a")
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("holder said %q", line)
	}

	_, err = s.Lock("0000000a", "courier run")
	if !errors.As(err, new(*LockedError)) {
		t.Errorf("Lock while another process holds it = %v, want a LockedError", err)
	} else if want := fmt.Sprintf("courier watch (pid %d", child.Process.Pid); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the holder %q", err, want)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	l, err := s.Lock("0000000a", "courier run")
	if err != nil {
		t.Fatalf("Lock after the holder was killed = %v", err)
	}
	l.Unlock()
}

// TestLockLeftWithDyingChild stands for a holder killed while it started a
// command: the child it forked keeps the lock until its exec closes it. The
// holder named in the lock file is dead, so Lock waits the moment out
// instead of saying the session is in use.
func TestLockLeftWithDyingChild(t *testing.T) {
	s := newStore(t)
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, "0000000a.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(f, true); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "{\"pid\":%d,\"command\":\"courier process\"}\n", dead.Process.Pid)
	released := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		unlockFile(f)
		close(released)
	}()
	l, err := s.Lock("0000000a", "courier process")
	if err != nil {
		t.Fatalf("Lock after the holder died = %v", err)
	}
	l.Unlock()
	<-released
}
