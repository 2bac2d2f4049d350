//go:build unix

package mapfile

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

func mapString(f *os.File) (string, error) {
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := info.Size()
	if size == 0 {
		return "", nil
	}
	if int64(int(size)) != size {
		return "", fmt.Errorf("map %s: %d bytes is too large", f.Name(), size)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return "", fmt.Errorf("map %s: %w", f.Name(), err)
	}
	return unsafe.String(unsafe.SliceData(data), len(data)), nil
}
