// Package reply is the LLM's answer as courier handles it: text with a
// name, read once. Wherever a reply comes from (a file saved into inbox/,
// the clipboard, an agent's output), New checks its size, decodes it,
// refuses a request pasted back by mistake, hashes it and parses it, so no
// other part of courier reads raw reply bytes.
package reply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
)

// Reply is a reply ready to apply.
type Reply struct {
	// Name says where the reply came from: a file name in inbox/, a path,
	// "clipboard ...", an agent run.
	Name string
	// Text is the decoded reply (UTF-8, LF line endings).
	Text string
	// Hash identifies the text whatever its encoding or line endings were.
	Hash string
	// Parsed is the text as Protocol (a front end's name) reads it.
	Parsed   frontend.Parsed
	Protocol string
}

// TooLargeError is a reply above the size limit; nothing of it was run.
type TooLargeError struct {
	Name  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("reply %s is larger than the %s limit; nothing was run", e.Name, human.ExactBytes(e.Limit))
}

// NotTextError is a reply that does not decode as text.
type NotTextError struct {
	Name string
	Err  error
}

func (e *NotTextError) Error() string {
	return fmt.Sprintf("reply %s: %v; nothing was run", e.Name, e.Err)
}

func (e *NotTextError) Unwrap() error { return e.Err }

// EchoError is one of courier's own requests where a reply belongs.
type EchoError struct {
	Name string
}

func (e *EchoError) Error() string {
	return fmt.Sprintf("%s is a request written by courier, not the LLM's answer; nothing was run", e.Name)
}

// IsUnusable reports whether err says a reply can never be applied, however
// often it is tried (too large, not text, a request echoed back), so its
// source should set it aside.
func IsUnusable(err error) bool {
	var big *TooLargeError
	var bin *NotTextError
	var echo *EchoError
	return errors.As(err, &big) || errors.As(err, &bin) || errors.As(err, &echo)
}

// New makes a reply from raw bytes. maxBytes bounds the input; a caller
// reading from a stream should not read more than maxBytes+1 (see Read).
func New(name string, raw []byte, maxBytes int64, fe frontend.FrontEnd) (Reply, error) {
	if maxBytes > 0 && int64(len(raw)) > maxBytes {
		return Reply{}, &TooLargeError{Name: name, Limit: maxBytes}
	}
	text, err := Decode(raw)
	if err != nil {
		return Reply{}, &NotTextError{Name: name, Err: err}
	}
	if frontend.IsRequest(text) {
		return Reply{}, &EchoError{Name: name}
	}
	return Reply{Name: name, Text: text, Hash: hashText(raw, text), Parsed: fe.Parse(text), Protocol: fe.Name()}, nil
}

// For returns the reply as front end fe reads it: as it is when fe parsed
// it, else parsed again from its text, which is never read or decoded
// again. A reply routed with the default front end is so given to a
// session that speaks another.
func (r Reply) For(fe frontend.FrontEnd) Reply {
	if r.Protocol != fe.Name() {
		r.Parsed, r.Protocol = fe.Parse(r.Text), fe.Name()
	}
	return r
}

// hashText is history.Hash of text without a copy of the whole reply:
// Decode returns raw's own bytes when it had nothing to change, and other
// text is hashed in pieces.
func hashText(raw []byte, text string) string {
	if string(raw) == text {
		return history.Hash(raw)
	}
	h := sha256.New()
	buf := make([]byte, min(len(text), 64<<10))
	for rest := text; rest != ""; {
		n := copy(buf, rest)
		h.Write(buf[:n])
		rest = rest[n:]
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Read reads a reply file, never more than maxBytes+1 bytes of it (0: no
// bound).
func Read(path, name string, maxBytes int64, fe frontend.FrontEnd) (Reply, error) {
	raw, err := readFile(path, name, maxBytes)
	if err != nil {
		return Reply{}, err
	}
	return New(name, raw, maxBytes, fe)
}

// Holds reports whether the file at path still holds the reply with the
// given hash, reading no more than maxBytes+1 bytes of it (0: no bound)
// and parsing nothing: a file replaced since the reply was taken is not
// mistaken for it.
func Holds(path, hash string, maxBytes int64) bool {
	raw, err := readFile(path, path, maxBytes)
	if err != nil || (maxBytes > 0 && int64(len(raw)) > maxBytes) {
		return false
	}
	text, err := Decode(raw)
	return err == nil && hashText(raw, text) == hash
}

// readFile reads a file, never more than maxBytes+1 bytes of it.
func readFile(path, name string, maxBytes int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	defer f.Close()
	limit := int64(math.MaxInt64)
	if maxBytes > 0 {
		limit = maxBytes + 1
	}
	raw, err := readLimited(f, limit)
	if err != nil {
		return nil, fmt.Errorf("read reply %s: %w", name, err)
	}
	return raw, nil
}

// readLimited reads f whole, but at most limit bytes, into a buffer sized
// from the file's size, so a large reply is held once rather than in the
// doubling buffers of io.ReadAll.
func readLimited(f *os.File, limit int64) ([]byte, error) {
	size := int64(512)
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		size = min(info.Size()+1, limit) // +1 sees the end without growing
	}
	buf := make([]byte, 0, size)
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // the file grew while read
		}
		n, err := f.Read(buf[len(buf):min(int64(cap(buf)), limit)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// Route names the session a reply belongs to: the one it echoes, read as
// its own protocol or else as one of others (a JSON reply names its
// session in a field the tag protocol does not see), else the one its
// name starts with (clipboard replies are saved as <id>_reply_...), else
// "" (the caller's default).
func (r Reply) Route(others ...frontend.FrontEnd) string {
	if r.Parsed.Session != "" {
		return r.Parsed.Session
	}
	for _, fe := range others {
		if fe.Name() == r.Protocol {
			continue
		}
		if id := fe.Parse(r.Text).Session; id != "" {
			return id
		}
	}
	return RouteName(r.Name)
}

// RouteName is the session a reply file's name points to, or "".
func RouteName(name string) string {
	base := strings.ToLower(filepath.Base(name))
	if len(base) >= 8 && history.ValidID(base[:8]) && (len(base) == 8 || !isHex(base[8])) {
		return base[:8]
	}
	return ""
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
}

// Empty reports whether the reply says nothing: no command, and no text
// besides the header lines echoing the session and sequence.
func (r Reply) Empty() bool {
	if len(r.Parsed.Commands) > 0 {
		return false
	}
	for _, line := range strings.Split(r.Text, "\n") {
		line = strings.TrimSpace(line)
		lower := strings.ToLower(line)
		if line != "" && !strings.HasPrefix(lower, "session:") && !strings.HasPrefix(lower, "sequence:") {
			return false
		}
	}
	return true
}
