package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/courier-agent/courier/internal/hint"
)

// Lock is an exclusive hold on one session. It is an flock on
// sessions/<id>.lock, so the kernel releases it when the process dies, even
// by SIGKILL; the file also names the holder for the error the next process
// shows.
type Lock struct {
	f *os.File
}

// Holder describes the process that holds a lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// ErrLocked is returned when another process holds the session.
var ErrLocked = errors.New("session is in use")

// Lock takes the session's lock without waiting. what describes the holder
// (e.g. "courier watch") for the error another process would show.
func (s Store) Lock(id, what string) (*Lock, error) {
	p := filepath.Join(s.Dir, id+".lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	// A holder killed while it started a command leaves the lock with the
	// child until the child's exec closes it, a moment later: wait for
	// that, never for a holder that is alive.
	for wait := 0; errors.Is(err, syscall.EWOULDBLOCK) && wait < deadHolderWait && !holderAlive(f); wait++ {
		time.Sleep(10 * time.Millisecond)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, hint.Wrap(fmt.Errorf("session %s: %w by %s", id, ErrLocked, describeHolder(f)),
				"wait for that process to finish, or stop it (Ctrl-C in its terminal)")
		}
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	h, _ := json.Marshal(Holder{PID: os.Getpid(), Command: what, Since: time.Now().UTC()})
	// Naming the holder is a courtesy: failing to write it must not fail the
	// lock, which the flock alone provides.
	if err := f.Truncate(0); err == nil {
		f.WriteAt(append(h, '\n'), 0)
	}
	return &Lock{f: f}, nil
}

// deadHolderWait is how many 10 ms waits Lock allows a lock whose holder
// has died.
const deadHolderWait = 100

// holderAlive reports whether the process the lock file names still runs
// (or cannot be told).
func holderAlive(f *os.File) bool {
	buf := make([]byte, 512)
	n, _ := f.ReadAt(buf, 0)
	var h Holder
	if err := json.Unmarshal(buf[:bytes.IndexByte(buf[:n], '\n')+1], &h); err != nil || h.PID <= 0 {
		return true
	}
	return !errors.Is(syscall.Kill(h.PID, 0), syscall.ESRCH)
}

func describeHolder(f *os.File) string {
	buf := make([]byte, 512)
	n, _ := f.ReadAt(buf, 0)
	var h Holder
	if err := json.Unmarshal(buf[:n], &h); err != nil || h.PID == 0 {
		return "another courier process"
	}
	return fmt.Sprintf("%s (pid %d, since %s)", h.Command, h.PID, h.Since.Local().Format("15:04:05"))
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	// Closing the file releases the flock.
	err := l.f.Close()
	l.f = nil
	return err
}
