//go:build !linux

package workspace

// dirCache holds nothing open where folders cannot be opened from their
// parents' descriptors: every file is read through OpenRegular.
type dirCache struct{}

func newDirCache(*Workspace, int) dirCache { return dirCache{} }

func (dirCache) close() {}

func (dirCache) read(string, []byte, bool) ([]byte, bool) { return nil, false }
