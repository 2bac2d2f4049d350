package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/history"
)

// The person's words to the LLM: a message for the next request, a fresh
// chat, a follow-up task for a complete session.

// EmptyMessageError: 'say' was given nothing to say.
type EmptyMessageError struct{}

func (EmptyMessageError) Error() string { return "the message is empty" }

// NotCompleteError: a follow-up task for a session still under way.
type NotCompleteError struct{ Session string }

func (e *NotCompleteError) Error() string {
	return fmt.Sprintf("session %s is not complete", e.Session)
}

// Said is what Say did: the request written again (Rewritten), or the
// message left for Holder, which took it at once (Heard) or will.
type Said struct {
	Session          string
	Sequence         int
	Rewritten, Heard bool
	Holder           string
}

// Say adds the person's message to the next request of a session (the
// named one, or the latest incomplete one); newChat makes it carry the
// whole protocol. The words are left in the session's folder first, where
// whoever holds the session finds them.
func (r *Runner) Say(id, text string, newChat bool) (Said, error) {
	text = strings.TrimSpace(text)
	if text == "" && !newChat {
		return Said{}, EmptyMessageError{}
	}
	st, err := r.resolve(id, false)
	if err != nil {
		return Said{}, err
	}
	if st.IsComplete {
		return Said{}, &CompleteError{Session: st.SessionID}
	}
	said := Said{Session: st.SessionID, Sequence: st.SequenceNumber}
	name, err := r.leaveWords(st.SessionID, words{Text: text, NewChat: newChat})
	if err != nil {
		return said, err
	}
	s, err := r.Hold(st.SessionID, "courier say")
	var locked *history.LockedError
	if errors.As(err, &locked) {
		if said.Heard = r.heard(st.SessionID, name); said.Heard {
			said.Holder = holderName(locked)
			return said, nil
		}
		// Not taken: the holder's turn takes them at its end, or it went
		// away and they are heard here.
		if s, err = r.Hold(st.SessionID, "courier say"); errors.As(err, &locked) {
			said.Holder = holderName(locked)
			return said, nil
		}
	}
	if err != nil {
		return said, err
	}
	defer s.Release()
	said.Sequence = s.st.SequenceNumber
	if s.st.IsComplete {
		// Completed meanwhile: the words wait for a follow-up task.
		return said, &CompleteError{Session: s.st.SessionID}
	}
	_, unfinished, err := r.store.Unfinished(s.st)
	if err != nil || unfinished {
		// The turn's commit puts the words in the request it writes.
		return said, err
	}
	said.Rewritten, err = s.hear()
	return said, err
}

func holderName(locked *history.LockedError) string {
	if locked.Holder != nil {
		return locked.Holder.Command
	}
	return "another courier process"
}

// words is what the person said for a session's next request, left in
// its folder (as file name) until a request shows it, or an undo of turn
// Undo asked while another process held the session.
type words struct {
	Text    string `json:"text,omitempty"`
	NewChat bool   `json:"newChat,omitempty"`
	Undo    int    `json:"undo,omitempty"`
	name    string
}

func (r *Runner) wordsPath(id, name string) string {
	return filepath.Join(r.store.Folder(id), "said", name)
}

// leaveWords writes w as a file named to sort in the order said.
func (r *Runner) leaveWords(id string, w words) (string, error) {
	data, err := json.Marshal(w)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("%020d-%d.json", time.Now().UnixNano(), os.Getpid())
	p := r.wordsPath(id, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("say: %w", err)
	}
	if err := atomicfile.Write(p, data, 0o644); err != nil {
		return "", fmt.Errorf("say: %w", err)
	}
	return name, nil
}

// waitingWords returns the words left for a session, in the order said.
func (r *Runner) waitingWords(id string) ([]words, error) {
	dir := r.wordsPath(id, "")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	var ws []words
	for _, e := range entries { // sorted by name: in the order said
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") || atomicfile.IsTemp(e.Name()) {
			continue
		}
		w := words{name: e.Name()}
		if data, err := os.ReadFile(filepath.Join(dir, w.name)); err == nil && json.Unmarshal(data, &w) == nil {
			ws = append(ws, w)
		}
	}
	return ws, nil
}

func (r *Runner) hasWords(id string) bool {
	ws, _ := r.waitingWords(id)
	return len(ws) > 0
}

// heardWait bounds how long 'say' waits for the holder to take its words.
const heardWait = 10 * time.Second

// heard waits a moment for the holder waiting for a reply to take words.
func (r *Runner) heard(id, name string) bool {
	for deadline := time.Now().Add(heardWait); ; time.Sleep(decisionPoll / 2) {
		if _, err := os.Stat(r.wordsPath(id, name)); errors.Is(err, fs.ErrNotExist) {
			return true
		}
		st, err := r.store.Load(id)
		if err != nil {
			return false
		}
		if _, busy, err := r.store.Unfinished(st); err != nil || busy || time.Now().After(deadline) {
			return false
		}
	}
}

// hear writes the current request again with the words waiting, if any;
// they are removed after the commit, so a crash never loses one.
func (s *Session) hear() (bool, error) {
	all, err := s.r.waitingWords(s.st.SessionID)
	var ws []words
	for _, w := range all {
		switch {
		case w.Undo == 0:
			ws = append(ws, w)
		case os.Remove(s.r.wordsPath(s.st.SessionID, w.name)) != nil:
			// Withdrawn by the process that asked (see handUndo).
		case w.Undo != s.st.UndoTop:
			s.r.cfg.Reporter.Warning(Warning{Message: fmt.Sprintf("the undo asked in another terminal was not done: the reply to request %d was applied since", s.st.UndoTop)})
		default:
			// An undo asked from another terminal, of the turn meant.
			if _, err := s.Undo(); err != nil {
				return false, err
			}
		}
	}
	if err != nil || len(ws) == 0 {
		return false, err
	}
	next := *s.st
	w, err := s.advance(&next, ws)
	if err != nil {
		return false, err
	}
	w.Updated = true
	s.r.cfg.Reporter.RequestWritten(w)
	return true, nil
}

// Continue reopens a complete session (or the latest) with a follow-up task.
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
	ws, err := r.waitingWords(st.SessionID)
	if err != nil {
		return "", err
	}
	next := *st
	next.IsComplete = false
	next.Summary = ""
	next.Messages = nil
	next.SequenceNumber++
	next.FollowUps = append(append([]string{}, st.FollowUps...), task)
	next.Prompt = task
	next.Notices = []string{"The task above was completed. The user has a follow-up task for the same workspace: see the PROMPT."}
	w, err := s.advance(&next, ws)
	if err != nil {
		return "", err
	}
	r.created = st.SessionID
	r.cfg.Reporter.RequestWritten(w)
	return st.SessionID, nil
}

// save commits next as the session's state, with no new request.
func (s *Session) save(next *history.State) error {
	next.UpdatedAt = time.Now().UTC()
	if err := s.r.store.Save(next); err != nil {
		return err
	}
	*s.st = *next
	return nil
}

// advance commits next with its request, which shows the words said.
func (s *Session) advance(next *history.State, said []words) (RequestWritten, error) {
	for _, w := range said {
		if w.Text != "" {
			next.Messages = append(slices.Clip(next.Messages), w.Text)
		}
		if w.NewChat {
			next.NewChat, next.Environment = true, ""
		}
	}
	next.UpdatedAt = time.Now().UTC()
	w, err := s.r.saveWithRequest(next, false)
	if err != nil {
		return w, err
	}
	*s.st = *next
	for _, w := range said {
		os.Remove(s.r.wordsPath(next.SessionID, w.name))
	}
	return w, nil
}
