// Package mapfile gives a file's content as a string without copying it
// into the heap: a request of a whole project, just written, is read
// back as the file's own pages.
package mapfile

import "os"

// String returns the content of the file at path. Where the file is
// mapped into memory the mapping is never undone, since the string may
// live on: map only files courier wrote and does not change in place.
func String(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return mapString(f)
}
