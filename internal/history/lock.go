package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/courier-agent/courier/internal/human"
)

// Lock is an exclusive hold on one session: a lock of the system's on
// sessions/<id>.lock (flock, or LockFileEx on Windows), released when the
// process dies. The file also says who holds it and what it does.
type Lock struct {
	f      *os.File
	holder Holder
}

// Holder describes the process that holds a lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	Doing   string    `json:"doing,omitempty"` // "waiting for a reply to request 3"
}

func (h Holder) String() string {
	s := fmt.Sprintf("%s (pid %d, since %s)", h.Command, h.PID, h.Since.Local().Format("15:04:05"))
	if h.Doing != "" {
		s += ", " + h.Doing
	}
	return s
}

// LockedError: another process holds the session.
type LockedError struct {
	Session string
	Holder  *Holder // if the lock file says
}

func (e *LockedError) Error() string {
	who := "another courier process"
	if e.Holder != nil {
		who = e.Holder.String()
	}
	return fmt.Sprintf("session %s is in use by %s", e.Session, who)
}

// errBusy: another process holds the lock (see lockFile).
var errBusy = errors.New("the lock is held")

func (s Store) lockPath(id string) string { return filepath.Join(s.Dir, id+".lock") }

// Lock takes the session's lock without waiting; what describes the
// holder ("courier watch").
func (s Store) Lock(id, what string) (*Lock, error) {
	f, err := os.OpenFile(s.lockPath(id), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	err = lockFile(f, true)
	// A holder killed while it started a command leaves the lock with the
	// child until its exec closes it: wait up to a second for a dead one.
	for wait := 0; errors.Is(err, errBusy) && wait < 100 && readHolder(f) != nil && !processAlive(readHolder(f).PID); wait++ {
		time.Sleep(10 * time.Millisecond)
		err = lockFile(f, true)
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, errBusy) {
			return nil, &LockedError{Session: id, Holder: readHolder(f)}
		}
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	l := &Lock{f: f, holder: Holder{PID: os.Getpid(), Command: what, Since: time.Now().UTC()}}
	l.write()
	return l, nil
}

// Note records what the holder is doing now.
func (l *Lock) Note(doing string) {
	if l != nil && l.f != nil && l.holder.Doing != doing {
		l.holder.Doing = human.Cut(doing, 200)
		l.write()
	}
}

// write names the holder in the lock file, in one write over a padded
// area, so a reader never sees half of two records.
func (l *Lock) write() {
	if h, err := json.Marshal(l.holder); err == nil && len(h) < holderSize {
		l.f.WriteAt(append(h, bytes.Repeat([]byte{' '}, holderSize-len(h))...), 0)
	}
}

// holderSize is the area a holder record is padded to.
const holderSize = 1024

func readHolder(f *os.File) *Holder {
	buf := make([]byte, holderSize)
	n, _ := f.ReadAt(buf, 0)
	var h Holder
	if json.Unmarshal(buf[:n], &h) != nil || h.PID <= 0 {
		return nil
	}
	return &h
}

// Holder returns who holds the session's lock, if anyone does.
func (s Store) Holder(id string) (Holder, bool) {
	f, err := os.Open(s.lockPath(id))
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	// A shared lock is refused only while an exclusive one is held.
	if err := lockFile(f, false); err == nil {
		unlockFile(f)
		return Holder{}, false
	}
	if h := readHolder(f); h != nil {
		return *h, true
	}
	return Holder{Command: "another courier process"}, true
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
