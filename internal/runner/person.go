package runner

import (
	"fmt"
	"strings"
	"time"
)

// The person's words to the LLM: a message for the next request, a fresh
// chat, a follow-up task for a complete session.

// EmptyMessageError: 'say' was given nothing to say.
type EmptyMessageError struct{}

func (EmptyMessageError) Error() string { return "the message is empty" }

// NotCompleteError: a follow-up task was given to a session still under
// way.
type NotCompleteError struct{ Session string }

func (e *NotCompleteError) Error() string {
	return fmt.Sprintf("session %s is not complete", e.Session)
}

// Said is what Say did.
type Said struct {
	Session  string
	Sequence int
	// Rewritten is set when the waiting request was written again with the
	// message; otherwise the message goes into the request after the turn
	// being applied.
	Rewritten bool
}

// Say adds the person's message to the session's next request (the named
// one, or the most recently updated incomplete one). When the current
// request has not been answered yet it is written again, with the message,
// so the person pastes it again. newChat makes that request carry the full
// protocol and the machine's description, for a fresh chat.
func (r *Runner) Say(id, text string, newChat bool) (Said, error) {
	text = strings.TrimSpace(text)
	if text == "" && !newChat {
		return Said{}, EmptyMessageError{}
	}
	s, err := r.HoldLatest(id, "courier say")
	if err != nil {
		return Said{}, err
	}
	defer s.Release()
	st := s.st
	if st.IsComplete {
		return Said{}, &CompleteError{Session: st.SessionID}
	}
	next := *st
	if text != "" {
		next.Messages = append(append([]string{}, st.Messages...), text)
	}
	if newChat {
		next.NewChat = true
		next.Environment = ""
	}
	next.UpdatedAt = time.Now().UTC()
	said := Said{Session: st.SessionID, Sequence: st.SequenceNumber}
	_, unfinished, err := r.store.Unfinished(st)
	if err != nil {
		return said, err
	}
	// The request is written before the state is saved, as a turn commits:
	// a crash between leaves the message shown once, never lost unseen.
	var written *RequestWritten
	if !unfinished {
		p, text, err := r.writeRequest(&next)
		if err != nil {
			return said, err
		}
		written = &RequestWritten{Session: next.SessionID, Sequence: next.SequenceNumber, Path: p, Text: text, Updated: true}
		said.Rewritten = true
	}
	if err := r.store.Save(&next); err != nil {
		return said, err
	}
	*st = next
	if written != nil {
		r.report(*written)
	}
	return said, nil
}

// Continue reopens a complete session (the named one, or the most recently
// updated) with a follow-up task: the same workspace, the next request
// asking for it. It returns the session's id.
func (r *Runner) Continue(id, task string) (string, error) {
	task = strings.TrimSpace(task)
	if task == "" {
		return "", EmptyTaskError{}
	}
	s, err := r.HoldLatest(id, "courier continue")
	if err != nil {
		return "", err
	}
	defer s.Release()
	st := s.st
	if !st.IsComplete {
		return "", &NotCompleteError{Session: st.SessionID}
	}
	next := *st
	next.IsComplete = false
	next.Summary = ""
	next.SequenceNumber++
	next.FollowUps = append(append([]string{}, st.FollowUps...), task)
	next.Prompt = task
	next.Notices = []string{"The task above was completed. The user has a follow-up task for the same workspace: see the PROMPT."}
	next.UpdatedAt = time.Now().UTC()
	p, text, err := r.writeRequest(&next)
	if err != nil {
		return "", err
	}
	if err := r.store.Save(&next); err != nil {
		return "", err
	}
	*st = next
	r.created = st.SessionID
	r.report(RequestWritten{Session: st.SessionID, Sequence: st.SequenceNumber, Path: p, Text: text})
	return st.SessionID, nil
}
