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
	"regexp"
	"strings"

	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
)

// Reply is a reply ready to apply.
type Reply struct {
	// Name says where it came from: a file name in inbox/, a path,
	// "clipboard ...", an agent run.
	Name string
	Text string // decoded: UTF-8, LF line endings
	Hash string // of Text, whatever the encoding and line endings were
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

// IsUnusable reports whether err says a reply can never be applied (too
// large, not text, a request echoed back), so its source sets it aside.
func IsUnusable(err error) bool {
	var big *TooLargeError
	var bin *NotTextError
	var echo *EchoError
	return errors.As(err, &big) || errors.As(err, &bin) || errors.As(err, &echo)
}

// New makes a reply from raw bytes, no more than maxBytes of them (0: no
// bound).
func New(name string, raw string, maxBytes int64, fe frontend.FrontEnd) (Reply, error) {
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
	return Reply{Name: name, Text: text, Hash: hashText(text), Parsed: fe.Parse(text), Protocol: fe.Name()}, nil
}

// For returns the reply as front end fe reads it, parsed again from its
// text unless fe parsed it: a reply routed with the default front end is
// so given to a session that speaks another.
func (r Reply) For(fe frontend.FrontEnd) Reply {
	if r.Protocol != fe.Name() {
		r.Parsed, r.Protocol = fe.Parse(r.Text), fe.Name()
	}
	return r
}

// hashText is history.Hash of text, hashed through io.Copy's small buffer
// (the LimitReader hides the strings.Reader's WriteTo, which would copy a
// large reply whole).
func hashText(text string) string {
	h := sha256.New()
	io.Copy(h, io.LimitReader(strings.NewReader(text), int64(len(text))))
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
// given hash (not replaced since), reading at most maxBytes+1 bytes of it.
func Holds(path, hash string, maxBytes int64) bool {
	// A reply in plain UTF-8 with LF line ends is its own text: hashed as
	// it is read, it is not held a second time beside the one applied.
	if f, err := os.Open(path); err == nil {
		h := sha256.New()
		_, err := io.Copy(h, io.LimitReader(f, readLimit(maxBytes)))
		f.Close()
		if err == nil && hex.EncodeToString(h.Sum(nil)) == hash {
			return true
		}
	}
	raw, err := readFile(path, path, maxBytes)
	if err != nil || (maxBytes > 0 && int64(len(raw)) > maxBytes) {
		return false
	}
	text, err := Decode(raw)
	return err == nil && hashText(text) == hash
}

// readLimit is how much of a reply file to read: maxBytes+1 to see it is
// larger (0: no bound).
func readLimit(maxBytes int64) int64 {
	if maxBytes > 0 {
		return maxBytes + 1
	}
	return math.MaxInt64
}

// readFile reads at most maxBytes+1 bytes of a file into a string sized
// from the file's size, so that a large reply is held once.
func readFile(path, name string, maxBytes int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read reply: %w", err)
	}
	defer f.Close()
	limit := readLimit(maxBytes)
	var b strings.Builder
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		b.Grow(int(min(info.Size()+1, limit))) // +1 sees the end without growing
	}
	if _, err := io.Copy(&b, io.LimitReader(f, limit)); err != nil {
		return "", fmt.Errorf("read reply %s: %w", name, err)
	}
	return b.String(), nil
}

// Route names the session a reply belongs to: the one it echoes in its
// own protocol or one of others (a JSON reply names it in a field the
// tags do not see), else the one its name starts with (<id>_reply_...),
// else a wrong id its header names ("Session: e1bfb16", a digit lost),
// which matches no session, else "" (the caller's default): a reply
// naming a wrong id is never the default session's.
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
	if id := RouteName(r.Name); id != "" {
		return id
	}
	return misnamed(r.Text)
}

// misnamedLine is a header line naming a session by a word that is not
// an id, with the Markdown marks a header may carry.
var misnamedLine = regexp.MustCompile("(?i)^[\\s#>*_`+-]*session(?:[ _]?id)?[\\s*_`]*:[\\s*_`]*([0-9a-z]{5,12})(?:[\\s*_`.,;]|$)")

// misnamed is the wrong session id the header of text (the lines before
// the first block or fence) names, lower-cased, or "". It must hold a
// digit or be all hex digits, as ids are (a cut "bfdbecb9" has no
// digit) and words of prose seldom are.
func misnamed(text string) string {
	for text != "" {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "[") || strings.HasPrefix(t, "```") {
			return ""
		}
		if len(line) > 200 {
			continue
		}
		if m := misnamedLine.FindStringSubmatch(line); m != nil && (strings.ContainsAny(m[1], "0123456789") || strings.Trim(strings.ToLower(m[1]), "abcdef") == "") {
			return strings.ToLower(m[1])
		}
	}
	return ""
}

// RouteName is the session a reply file's name points to, or "".
func RouteName(name string) string {
	base := strings.ToLower(filepath.Base(name))
	if len(base) >= 8 && history.ValidID(base[:8]) && (len(base) == 8 || !strings.Contains("0123456789abcdef", base[8:9])) {
		return base[:8]
	}
	return ""
}

// Empty reports whether the reply has no command and no text besides the
// header lines.
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
