package edit

import "bytes"

// AppendNumbered appends data, a whole file, to dst as Numbered shows it
// with opts, and returns the extended slice; on an error (ErrNotText) dst
// comes back as it was given.
func AppendNumbered(dst []byte, path string, data []byte, opts NumberOptions) ([]byte, error) {
	l, err := Numbered(path, bytes.NewReader(data), opts)
	if err != nil {
		return dst, err
	}
	return append(dst, l.Text...), nil
}
