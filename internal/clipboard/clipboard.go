package clipboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrEmpty is returned by Paste when the clipboard holds no text.
var ErrEmpty = errors.New("clipboard is empty")

// outside is the folder the tools run in: never courier's own, which may
// be the workspace, where a reply could plant what a tool reads from its
// working folder; and the server a copy leaves running holds no folder of
// the person's.
const outside = "/"

// toolTimeout bounds one run of a clipboard tool, so a display that stops
// answering cannot hang courier.
const toolTimeout = 5 * time.Second

// verifyPoll is how often Copy re-reads the clipboard while waiting for a
// tool that returns before its server owns the clipboard.
const verifyPoll = 20 * time.Millisecond

// takeLimit is how long Copy waits for a tool's server to take the
// clipboard before running the tool again, and copyAttempts how many times
// it runs the tool: xsel's server sometimes dies before it serves anything.
const (
	takeLimit    = 2 * time.Second
	copyAttempts = 3
)

// Copy puts text on the clipboard. The text stays there after courier
// exits: X and Wayland tools leave a server process behind that serves it
// until something else is copied. That server is started in its own
// session, so neither Ctrl-C in courier's terminal nor closing the terminal
// takes the text away, and courier does not wait for it. Copy returns once
// a paste would return text.
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
	cmd.Stdin = bytes.NewReader(c.b.codec.encodeText(text))
	cmd.Stderr = errFile
	detach(cmd)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("copy with %s: %w%s", c.b.name, err, detail(readAll(errFile)))
	}
	return nil
}

// holds re-reads the clipboard until it holds text, for at most takeLimit.
func (c *Clipboard) holds(text string) bool {
	deadline := time.Now().Add(takeLimit)
	for {
		got, err := c.Paste()
		if (err == nil && got == text) || (text == "" && errors.Is(err, ErrEmpty)) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(verifyPoll)
	}
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
	text := c.b.codec.decodeText(stdout.Bytes())
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

func readAll(f *os.File) string {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	return string(b)
}
