package reply

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/courier-agent/courier/internal/protocol"
)

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	units := utf16.Encode([]rune(s))
	var out []byte
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

func TestDecode(t *testing.T) {
	const reply = "Session: a1b2c3d4\n[CREATE_FILE path=\"é.txt\"]\nnaïve “quotes” 日本語 🙂\n[/CREATE_FILE]\n"
	crlf := strings.ReplaceAll(reply, "\n", "\r\n")
	cases := []struct {
		name string
		raw  []byte
		want string
	}{
		{"utf-8", []byte(reply), reply},
		{"utf-8 with bom", append([]byte{0xEF, 0xBB, 0xBF}, reply...), reply},
		{"crlf", []byte(crlf), reply},
		{"lone cr (old mac)", []byte(strings.ReplaceAll(reply, "\n", "\r")), reply},
		{"utf-16 le with bom (notepad unicode)", utf16Bytes(crlf, false, true), reply},
		{"utf-16 be with bom", utf16Bytes(crlf, true, true), reply},
		{"utf-16 le without bom", utf16Bytes(reply, false, false), reply},
		{"utf-16 be without bom", utf16Bytes(reply, true, false), reply},
		{"a few stray bytes are replaced", []byte("ok \xff here\n"), "ok \uFFFD here\n"},
		{"empty", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Through a real file, as the inbox reads it.
			path := filepath.Join(t.TempDir(), "reply.txt")
			if err := os.WriteFile(path, tc.raw, 0o644); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(string(raw))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDecodeDecodedReplyParses(t *testing.T) {
	raw := utf16Bytes("[RUN_COMMAND]\r\ndir\r\n[/RUN_COMMAND]\r\n", false, true)
	text, err := Decode(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	cmds := protocol.Parse(text).Commands
	if len(cmds) != 1 || cmds[0].Command != "dir" {
		t.Fatalf("got %+v", cmds)
	}
}

func TestDecodeRejectsBinary(t *testing.T) {
	latin1 := []byte("caf\xe9 cr\xe8me br\xfbl\xe9e na\xefve \xe0 la r\xe9sum\xe9 d\xe9j\xe0 vu fa\xe7ade\n")
	cases := []struct {
		name   string
		raw    []byte
		reason string
		offset int
	}{
		{"png header", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "reply is not text: NUL byte at byte 8", 8},
		{"nul in the middle of text", []byte("hello\x00world"), "NUL byte at byte 5", 5},
		{"latin-1 text", latin1, "reply is not text: invalid UTF-8 at byte 3", 3},
		{"odd utf-16", append(utf16Bytes("hi", false, true), 'x'), "odd byte count in UTF-16 text", 6},
		{"nul character in utf-16", utf16Bytes("a\x00b", false, true), "NUL character in UTF-16 text at byte 4", 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(string(tc.raw))
			if err == nil {
				t.Fatal("Decode accepted it")
			}
			if !errors.Is(err, ErrBinary) {
				t.Errorf("error %v does not wrap ErrBinary", err)
			}
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset != tc.offset {
				t.Errorf("error %#v, want a *DecodeError at offset %d", err, tc.offset)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %q lacks %q", err, tc.reason)
			}
		})
	}
}

// UTF-16 with any mix of surrogates, paired or not, and CRs decodes to what
// utf16.Decode gives, with line ends made LF.
func TestDecodeUTF16MatchesReference(t *testing.T) {
	alphabet := []uint16{'a', '\r', '\n', 0xE9, 0x65E5, 0xD83D, 0xDE42, 0xDC00, 0xFEFF, 0xFFFD}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 3000; i++ {
		units := []uint16{0xFEFF}
		for n := 1 + rng.IntN(40); n > 0; n-- {
			units = append(units, alphabet[rng.IntN(len(alphabet))])
		}
		bigEndian := i%2 == 0
		var raw []byte
		for _, u := range units {
			if bigEndian {
				raw = append(raw, byte(u>>8), byte(u))
			} else {
				raw = append(raw, byte(u), byte(u>>8))
			}
		}
		want := strings.TrimPrefix(string(utf16.Decode(units[1:])), "\uFEFF")
		want = strings.ReplaceAll(strings.ReplaceAll(want, "\r\n", "\n"), "\r", "\n")
		got, err := Decode(string(raw))
		if err != nil {
			t.Fatalf("units %x: %v", units, err)
		}
		if got != want {
			t.Fatalf("units %x:\ngot  %q\nwant %q", units, got, want)
		}
	}
}
