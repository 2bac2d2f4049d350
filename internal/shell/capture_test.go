package shell

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// expectedCapture is the capture's contract written the simple way: decode
// everything (one U+FFFD per invalid byte), then keep it whole or cut the
// middle.
func expectedCapture(input []byte, max int) string {
	runes := []rune(string(input))
	if len(runes) <= max {
		return string(runes)
	}
	noteLen := utf8.RuneCountInString(cutNote(int64(len(runes))))
	avail := max - noteLen
	if avail < 2 {
		return string(runes[:(max+1)/2])
	}
	keepHead := avail / 2
	keepTail := avail - keepHead
	cut := len(runes) - keepHead - keepTail
	return string(runes[:keepHead]) + cutNote(int64(cut)) + string(runes[len(runes)-keepTail:])
}

// feed writes input to a new capture in chunks of the given sizes, cycling.
func feed(input []byte, max int, chunks []int) *capture {
	c := newCapture(max)
	for i := 0; len(input) > 0; i++ {
		n := min(chunks[i%len(chunks)], len(input))
		c.Write(input[:n])
		input = input[n:]
	}
	return c
}

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	lines := func(n int) []byte {
		var b bytes.Buffer
		for i := 1; i <= n; i++ {
			b.WriteString(strconv.Itoa(i) + "\n")
		}
		return b.Bytes()
	}
	tests := []struct {
		name  string
		input []byte
		max   int
		want  string
	}{
		{"empty", nil, 10, ""},
		{"fits exactly", []byte("0123456789"), 10, "0123456789"},
		{"cut in the middle", lines(1000), 60, "1\n2\n3\n4\n5\n6\n7\n\n... [3864 characters cut] ...\n7\n998\n999\n1000\n"},
		{"multibyte counted once", []byte(strings.Repeat("ж", 10)), 10, strings.Repeat("ж", 10)},
		{"invalid bytes replaced", []byte("a\xffb\xe2\x82"), 10, "a\uFFFDb\uFFFD\uFFFD"},
		{"cap smaller than the note", []byte(strings.Repeat("x", 100)), 5, "xxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunks := range [][]int{{1 << 20}, {1}, {3, 1, 2}} {
				c := feed(tt.input, tt.max, chunks)
				if got := c.text(); got != tt.want {
					t.Errorf("chunks %v: got %q, want %q", chunks, got, tt.want)
				}
			}
		})
	}
}

func TestCaptureMatchesReference(t *testing.T) {
	// Random mixes of ASCII, multibyte and invalid bytes, written in random
	// chunks, must always give what decoding everything at once gives.
	alphabet := [][]byte{[]byte("a"), []byte("\n"), []byte("é"), []byte("€"), []byte("😀"), {0xff}, {0xe2, 0x82}, {0xf0, 0x9f}, {0x80}}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		var input []byte
		for n := rng.IntN(400); n > 0; n-- {
			input = append(input, alphabet[rng.IntN(len(alphabet))]...)
		}
		max := 1 + rng.IntN(120)
		chunks := []int{1 + rng.IntN(7), 1 + rng.IntN(300), 1 + rng.IntN(2)}
		c := feed(input, max, chunks)
		want := expectedCapture(input, max)
		if got := c.text(); got != want {
			t.Fatalf("input %q max %d chunks %v:\ngot  %q\nwant %q", input, max, chunks, got, want)
		}
		if utf8.RuneCountInString(want) > max {
			t.Fatalf("reference exceeds the cap for %q", input)
		}
		if c.truncated() != (utf8.RuneCount(input) > max) {
			t.Fatalf("truncated = %v for %d runes and max %d", c.truncated(), utf8.RuneCount(input), max)
		}
	}
}

func TestCaptureLargeWritesSkipTheMiddle(t *testing.T) {
	// A single write far larger than the cap takes the fast path that counts
	// the middle without decoding it; the count must still be exact.
	input := bytes.Repeat([]byte("é\xffab"), 250_000)
	input = append([]byte("START"), append(input, []byte("END")...)...)
	c := feed(input, 200, []int{64 << 10})
	if got, want := c.text(), expectedCapture(input, 200); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestCaptureReadFromMatchesReference(t *testing.T) {
	// Output read from a pipe-like reader in pieces of any size, long enough
	// to wrap the ring many times, gives what decoding everything gives.
	alphabet := [][]byte{[]byte("abcdefgh"), []byte("\n"), []byte("é"), []byte("€"), []byte("😀"), {0xff}, {0xe2, 0x82}, {0xf0, 0x9f}, {0x80}, {0xed, 0xa0, 0x80}}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200; i++ {
		var input []byte
		for n := rng.IntN(50_000); n > 0; n-- {
			input = append(input, alphabet[rng.IntN(len(alphabet))]...)
		}
		max := 1 + rng.IntN(300)
		readers := []io.Reader{bytes.NewReader(input), iotest.HalfReader(bytes.NewReader(input)), iotest.OneByteReader(bytes.NewReader(input))}
		r := readers[i%len(readers)]
		c := newCapture(max)
		if _, err := io.Copy(c, r); err != nil {
			t.Fatal(err)
		}
		if got, want := c.text(), expectedCapture(input, max); got != want {
			t.Fatalf("input of %d bytes, max %d, reader %d:\ngot  %q\nwant %q", len(input), max, i%len(readers), got, want)
		}
	}
}

// BenchmarkCapture shows that memory stays flat as output grows: bytes and
// allocations per operation do not depend on the number of bytes written.
func BenchmarkCapture(b *testing.B) {
	chunk := bytes.Repeat([]byte("compiling package ünïcödé\n"), 32<<10/30)
	for _, size := range []int{64 << 10, 1 << 20, 64 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				c := newCapture(DefaultMaxOutput)
				for written := 0; written < size; written += len(chunk) {
					c.Write(chunk)
				}
				_ = c.text()
			}
		})
	}
}
