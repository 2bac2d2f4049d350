package clipboard

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf16"
)

// ErrEmpty is returned by Paste when the clipboard holds no text.
var ErrEmpty = errors.New("clipboard is empty")

// outside is the folder the tools run in: never courier's own, which may
// be the workspace, where a reply could plant what a tool reads there.
const outside = "/"

const (
	// toolTimeout bounds one run of a tool: a display that stops
	// answering cannot hang courier.
	toolTimeout = 5 * time.Second
	// Copy re-reads the clipboard every verifyPoll, for up to takeLimit,
	// until a tool's server owns it, and runs the tool up to copyAttempts
	// times: xsel's server sometimes dies before it serves anything.
	verifyPoll   = 20 * time.Millisecond
	takeLimit    = 2 * time.Second
	copyAttempts = 3
)

// Copy puts text on the clipboard, where it stays after courier exits: X
// and Wayland tools leave a server behind, started in its own session so
// that neither Ctrl-C nor closing the terminal takes the text away. Copy
// returns once a paste would return text.
func (c *Clipboard) Copy(text string) error {
	if c.b.maxCopy > 0 && len(text) > c.b.maxCopy {
		return fmt.Errorf("copy with %s: %d bytes is more than %s copies reliably (%d); install xclip",
			c.b.name, len(text), c.b.name, c.b.maxCopy)
	}
	for attempt := 1; ; attempt++ {
		if err := c.runCopy(text); err != nil {
			return err
		}
		if !c.b.verify || c.holds(text) {
			return nil
		}
		if attempt == copyAttempts {
			return fmt.Errorf("copy with %s: the clipboard did not take the text after %d tries", c.b.name, copyAttempts)
		}
	}
}

func (c *Clipboard) runCopy(text string) error {
	// The server inherits the tool's stdout and stderr. A pipe there would
	// make Wait block until the server exits, so stdout goes to the null
	// device and stderr to a file, neither of which Wait waits on.
	errFile, err := os.CreateTemp("", "courier-clipboard-*")
	if err != nil {
		return fmt.Errorf("copy with %s: %w", c.b.name, err)
	}
	defer os.Remove(errFile.Name())
	defer errFile.Close()

	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.copy[0], c.copy[1:]...)
	cmd.Env = c.env
	cmd.Dir = outside
	cmd.Stdin = bytes.NewReader(c.b.encode(text))
	cmd.Stderr = errFile
	detach(cmd)
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(errFile.Name())
		return fmt.Errorf("copy with %s: %w%s", c.b.name, err, detail(string(out)))
	}
	return nil
}

// holds re-reads the clipboard until it holds text, for at most takeLimit.
func (c *Clipboard) holds(text string) bool {
	for start := time.Now(); time.Since(start) < takeLimit; time.Sleep(verifyPoll) {
		if got, err := c.Paste(); (err == nil && got == text) || (text == "" && errors.Is(err, ErrEmpty)) {
			return true
		}
	}
	return false
}

// Paste returns the text on the clipboard, or ErrEmpty when there is none.
func (c *Clipboard) Paste() (string, error) {
	text, err := c.runPaste()
	if errors.Is(err, context.DeadlineExceeded) {
		// The request may have gone to a program that was giving up the
		// clipboard and never answered; the new owner will.
		text, err = c.runPaste()
	}
	return text, err
}

func (c *Clipboard) runPaste() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.paste[0], c.paste[1:]...)
	cmd.Env = c.env
	cmd.Dir = outside
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// Paste tools do not fork, but never let a stray child holding the
	// pipes keep Paste waiting.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("paste with %s: no answer within %s: %w", c.b.name, toolTimeout, ctx.Err())
	}
	text := c.b.decode(stdout.Bytes())
	if text == "" && (err == nil || saysEmpty(stderr.String())) {
		return "", ErrEmpty
	}
	if err != nil {
		return "", fmt.Errorf("paste with %s: %w%s", c.b.name, err, detail(stderr.String()))
	}
	return text, nil
}

// saysEmpty recognises the tools' ways of saying there is nothing to paste
// (xclip: "target UTF8_STRING not available"; wl-paste: "Nothing is
// copied", "No selection", "No suitable type of content copied").
func saysEmpty(stderr string) bool {
	s := strings.ToLower(stderr)
	for _, phrase := range []string{"not available", "nothing is copied", "no selection", "no suitable type"} {
		if strings.Contains(s, phrase) {
			return true
		}
	}
	return false
}

// detail formats a tool's error output for the end of an error message.
func detail(stderr string) string {
	s := strings.TrimSpace(stderr)
	if s == "" {
		return ""
	}
	return ": " + strings.Join(strings.Fields(s), " ")
}

// encode feeds clip.exe UTF-16 with a byte order mark, the one input it
// does not read in the console's code page.
func (b backend) encode(s string) []byte {
	if !b.windows {
		return []byte(s)
	}
	out := binary.LittleEndian.AppendUint16(nil, 0xFEFF)
	for _, u := range utf16.Encode([]rune(s)) {
		out = binary.LittleEndian.AppendUint16(out, u)
	}
	return out
}

// decode undoes the line end PowerShell adds after Get-Clipboard's output.
func (b backend) decode(out []byte) string {
	if !b.windows {
		return string(out)
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(out), "\ufeff"), "\r\n")
}
