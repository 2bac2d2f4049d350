package snapshot

import (
	"io/fs"
	"syscall"
)

// blockSize is what a file system allocates at the least per file on
// the systems courier runs on (ext4, XFS, btrfs, tmpfs): a content of a
// few bytes takes that much of the disk, so the budget counts it so.
const blockSize = 4096

// onDisk is the disk space a file takes: its allocated blocks, as du
// counts them.
func onDisk(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return allocated(info.Size())
}

// allocated estimates the disk space of a file of n bytes.
func allocated(n int64) int64 {
	return (n + blockSize - 1) / blockSize * blockSize
}
