//go:build !unix

package mapfile

import (
	"io"
	"os"
)

func mapString(f *os.File) (string, error) {
	data, err := io.ReadAll(f)
	return string(data), err
}
