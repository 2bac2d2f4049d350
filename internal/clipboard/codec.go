package clipboard

import (
	"encoding/binary"
	"strings"
	"unicode/utf16"
)

// codec adapts text to a tool set that does not speak UTF-8 on its own.
type codec struct {
	encode func(string) []byte
	decode func([]byte) string
	env    []string // extra environment for the tools
}

func (c codec) encodeText(s string) []byte {
	if c.encode == nil {
		return []byte(s)
	}
	return c.encode(s)
}

func (c codec) decodeText(b []byte) string {
	if c.decode == nil {
		return string(b)
	}
	return c.decode(b)
}

// windowsCodec feeds clip.exe UTF-16 with a byte order mark, the one input
// it does not read in the console's code page, and undoes the line end that
// PowerShell adds after Get-Clipboard's output.
var windowsCodec = codec{
	encode: func(s string) []byte {
		units := utf16.Encode([]rune(s))
		b := make([]byte, 2+2*len(units))
		binary.LittleEndian.PutUint16(b, 0xFEFF)
		for i, u := range units {
			binary.LittleEndian.PutUint16(b[2+2*i:], u)
		}
		return b
	},
	decode: func(b []byte) string {
		s := strings.TrimPrefix(string(b), "\ufeff")
		return strings.TrimSuffix(s, "\r\n")
	},
}
