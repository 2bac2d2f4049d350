package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/courier-agent/courier/internal/termtext"

	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runner"
)

// Terminal asks the person on the terminal about commands the policy will
// not run alone.
type Terminal struct {
	w io.Writer
	// wait is the answer "w" gives: runner.Later where courier waits for a
	// decision from another terminal (watch), runner.Stop where it would
	// only hang (process).
	wait runner.Answer

	in    *bufio.Reader
	once  sync.Once
	lines chan line
}

type line struct {
	text string
	err  error
}

// NewTerminal returns an approver reading answers from in and writing
// questions to w.
func NewTerminal(in io.Reader, w io.Writer, wait runner.Answer) *Terminal {
	return &Terminal{w: w, wait: wait, in: bufio.NewReader(in)}
}

// readLine returns the next line the person typed, or ctx's error. One
// goroutine reads the terminal for the whole run, so that a question
// abandoned (Ctrl-C, an answer from elsewhere) loses no line of the next.
func (a *Terminal) readLine(ctx context.Context) (string, error) {
	a.once.Do(func() {
		a.lines = make(chan line)
		go func() {
			for {
				s, err := a.in.ReadString('\n')
				a.lines <- line{s, err}
				if err != nil {
					close(a.lines)
					return
				}
			}
		}()
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case l, ok := <-a.lines:
		if !ok {
			return "", io.EOF
		}
		return l.text, l.err
	}
}

// Approve implements runner.Approver: it shows the whole command, each
// line made safe and marked as the command's, and reads the answer.
func (a *Terminal) Approve(ctx context.Context, q runner.Question) (runner.Decision, error) {
	fmt.Fprintf(a.w, "\ncourier: this command needs your approval: %s\n", termtext.Safe(q.Reason))
	if q.Env != "" {
		fmt.Fprintf(a.w, "    with the variables %s\n", termtext.Safe(q.Env))
	}
	lines := strings.Split(strings.TrimRight(q.Command, "\n"), "\n")
	for _, l := range lines {
		fmt.Fprintf(a.w, "    │ %s\n", termtext.Safe(l))
	}
	// A line of courier's own closes the command, so nothing in it can
	// pass for the question.
	fmt.Fprintf(a.w, "    └ end of the command (%s)\n", human.Count(len(lines), "line", ""))
	if q.Covers != "" {
		fmt.Fprintf(a.w, "[a]ll like it also runs, without asking, %s\n", termtext.Safe(q.Covers))
	}
	for {
		fmt.Fprintf(a.w, "Run it? [y]es, [n]o, [a]ll like it this session, [w]ait and decide later: ")
		text, err := a.readLine(ctx)
		if ctx.Err() != nil {
			fmt.Fprintln(a.w)
			return runner.Decision{}, ctx.Err()
		}
		answer := strings.ToLower(strings.TrimSpace(text))
		switch {
		case answer == "y" || answer == "yes":
			return runner.Decision{Answer: runner.Approve}, nil
		case answer == "a" || answer == "all":
			return runner.Decision{Answer: runner.ApproveAll}, nil
		case answer == "n" || answer == "no":
			fmt.Fprintf(a.w, "Why (told to the LLM; Enter to skip): ")
			reason, _ := a.readLine(ctx)
			if ctx.Err() != nil {
				return runner.Decision{}, ctx.Err()
			}
			return runner.Decision{Answer: runner.Deny, Reason: strings.TrimSpace(reason)}, nil
		case answer == "w" || answer == "wait":
			if a.wait == runner.Later {
				fmt.Fprintf(a.w, "courier: waiting; answer with 'courier approve %s' or 'courier deny %s' in another terminal\n", q.Session, q.Session)
			}
			return runner.Decision{Answer: a.wait}, nil
		case err != nil:
			// The terminal is gone: leave the question open.
			return runner.Decision{Answer: runner.Stop}, nil
		}
	}
}
