package sandbox

import "path/filepath"

// TempDir is the session's private temporary folder (TMPDIR), "" without
// Caches.
func (o Options) TempDir() string {
	if o.Caches == "" {
		return ""
	}
	return filepath.Join(o.Layer(), "tmp")
}
