package history

import "golang.org/x/sys/unix"

const oPath = unix.O_PATH

func mkfifoAt(fd int, name string, mode uint32) error { return unix.Mkfifoat(fd, name, mode) }

// syncFS makes what was written to the file systems holding dirs durable:
// one syncfs each, not an fsync (a journal commit) per file.
func syncFS(dirs ...string) error {
	done := map[uint64]bool{}
	for _, dir := range dirs {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			var st unix.Stat_t
			if err = unix.Fstat(fd, &st); err == nil && !done[st.Dev] {
				done[st.Dev] = true
				err = unix.Syncfs(fd)
			}
			unix.Close(fd)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
