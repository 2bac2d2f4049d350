//go:build !linux

package workspace

// describeAll looks up the size of each file among entries and marks the
// binary ones; folder summaries are left alone, and files that are gone
// are dropped.
func (w *Workspace) describeAll(entries []Entry) []Entry {
	buf := make([]byte, sniffSize)
	out := entries[:0]
	for _, e := range entries {
		if !e.IsDir {
			info, err := w.root.Lstat(e.Path)
			if err != nil {
				continue
			}
			e.Size, e.Regular = info.Size(), info.Mode().IsRegular()
			e.Binary = w.sniffBinary(e.Path, buf)
		}
		out = append(out, e)
	}
	return out
}
