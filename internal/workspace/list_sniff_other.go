//go:build !linux

package workspace

// sniffAll marks the binary files among entries; folder entries are left
// alone.
func (w *Workspace) sniffAll(entries []Entry) {
	buf := make([]byte, sniffSize)
	for i := range entries {
		if !entries[i].IsDir {
			entries[i].Binary = w.sniffBinary(entries[i].Path, buf)
		}
	}
}
