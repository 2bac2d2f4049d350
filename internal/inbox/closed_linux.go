package inbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// closedEvents reports, through inotify (fsnotify has no close-write), the
// files of a folder just closed by a writer or moved in: complete then.
type closedEvents struct {
	f     *os.File
	fd    int // f's, for adding watches
	dir   string
	names chan string
	wg    sync.WaitGroup
}

func startClosed(dir string) (*closedEvents, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	// Non-blocking, it is read through the runtime's poller: Close wakes
	// the reader.
	c := &closedEvents{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, dir: dir, names: make(chan string, 64)}
	if err := c.add(); err != nil {
		c.f.Close()
		return nil, err
	}
	c.wg.Add(1)
	go c.read()
	return c, nil
}

// add (re)watches the folder.
func (c *closedEvents) add() error {
	if _, err := unix.InotifyAddWatch(c.fd, c.dir, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO); err != nil {
		return fmt.Errorf("inotify watch %s: %w", c.dir, err)
	}
	return nil
}

func (c *closedEvents) read() {
	defer c.wg.Done()
	defer close(c.names)
	buf := make([]byte, 64<<10)
	for {
		n, err := c.f.Read(buf)
		if err != nil {
			// Closed by stop, or broken: replies still settle.
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			// struct inotify_event: wd, mask, cookie, len, then the name.
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			end := off + unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[off+12:]))
			if end > n {
				break
			}
			name := buf[off+unix.SizeofInotifyEvent : end]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) > 0 && mask&(unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO) != 0 {
				c.names <- filepath.Join(c.dir, string(name))
			}
			off = end
		}
	}
}

// channel returns the paths of complete files; nil when c is.
func (c *closedEvents) channel() <-chan string {
	if c == nil {
		return nil
	}
	return c.names
}

func (c *closedEvents) stop() {
	if c == nil {
		return
	}
	c.f.Close()
	// The reader may be blocked handing over a name nobody takes now.
	go func() {
		for range c.names {
		}
	}()
	c.wg.Wait()
}

// beingWritten reports whether some process holds path open for writing:
// the kernel leases only a file nobody writes (not on network folders).
func beingWritten(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case err == nil:
		unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
		return false, nil
	case errors.Is(err, unix.EAGAIN):
		return true, nil
	}
	return false, fmt.Errorf("lease %s: %w", path, err)
}
