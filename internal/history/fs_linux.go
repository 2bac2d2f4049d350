package history

import "golang.org/x/sys/unix"

const oPath = unix.O_PATH

func mkfifoAt(fd int, name string, mode uint32) error { return unix.Mkfifoat(fd, name, mode) }

// syncFS makes everything written to the file systems holding dirs
// durable, one call each, where an fsync per file would cost a journal
// commit each.
func syncFS(dirs ...string) error {
	for _, dir := range dirs {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Syncfs(fd)
			unix.Close(fd)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
