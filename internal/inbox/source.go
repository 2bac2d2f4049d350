package inbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/frontend"
	replies "github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
)

// Replies are named by their file name in the inbox; settling one moves
// it into processed/ or rejected/, never replacing a file there.

// Watcher waits for replies saved into the inbox for one session.
type Watcher struct {
	folder
	opts WatchOptions
	// passed are the files passed over (another session's), by path, with
	// their contentKey then: each version is reported once.
	passed map[string]string
}

// NewWatcher waits for session id's replies in dir, and those naming none.
func NewWatcher(dir, id string, opts WatchOptions) *Watcher {
	return &Watcher{folder: folder{dir: dir, id: id, unnamed: true, maxReply: opts.MaxReply}, opts: opts, passed: map[string]string{}}
}

func (w *Watcher) Where() string { return "in " + filepath.Base(w.dir) + "/" }

var errFound = errors.New("found")

// Settle implements runner.Source; another session's reply waits, unoffered.
func (w *Watcher) Settle(name, hash string, how runner.Settlement) (string, error) {
	if how == runner.Skipped {
		p := filepath.Join(w.dir, name)
		w.passed[p] = contentKey(p)
		return "", nil
	}
	return w.folder.Settle(name, hash, how)
}

// Next implements runner.Source: it waits for a complete reply file.
func (w *Watcher) Next(ctx context.Context, req runner.Request) (replies.Reply, error) {
	var got replies.Reply
	var gotErr error
	err := Watch(ctx, w.dir, w.opts, func(path string) error {
		if key, ok := w.passed[path]; ok && key == contentKey(path) {
			return nil
		}
		rep, err := w.take(path, req)
		skipped := errors.As(err, new(*runner.SkippedError))
		if skipped {
			w.passed[path] = contentKey(path)
		}
		if err == nil || skipped || errors.As(err, new(*runner.SetAsideError)) {
			got, gotErr = rep, err
			return errFound
		}
		return nil // unreadable now: the watch tells the person if it persists
	})
	switch {
	case errors.Is(err, errFound):
		return got, gotErr
	case err != nil:
		return replies.Reply{}, err
	}
	return replies.Reply{}, ctx.Err()
}

// contentKey tells two versions of a file apart cheaply.
func contentKey(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", info.Size(), info.ModTime().UnixNano())
}

// Backlog gives one session's replies waiting in the inbox, oldest first.
type Backlog struct {
	folder
	tried map[string]bool
}

// Next implements runner.Source.
func (p *Backlog) Next(_ context.Context, req runner.Request) (replies.Reply, error) {
	paths, err := Pending(p.dir)
	if err != nil {
		return replies.Reply{}, err
	}
	for _, path := range paths {
		if p.tried[path] {
			continue
		}
		p.tried[path] = true
		if why := unfinished(path, time.Now()); why != "" {
			return replies.Reply{}, &runner.SkippedError{Reply: filepath.Base(path), Why: why}
		}
		rep, err := p.take(path, req)
		var skipped *runner.SkippedError
		if errors.As(err, &skipped) && skipped.Why == "" {
			continue // another session's; it gets its own turn
		}
		return rep, err
	}
	return replies.Reply{}, runner.ErrExhausted
}

// Queue is the inbox folder as replies waiting for several sessions.
type Queue struct {
	Dir string
	// MaxReply bounds every read of a reply file (0: the runner's limit,
	// which settling a recovered turn's reply does without).
	MaxReply int64
}

// Sessions implements runner.Queue.
func (q Queue) Sessions(protocols []frontend.FrontEnd, maxReply int64) ([]string, error) {
	paths, err := Pending(q.Dir)
	if err != nil {
		return nil, err
	}
	var ids []string
	seen := map[string]bool{}
	for _, path := range paths {
		// The session the reply names in any of the protocols, the first
		// the default; else, or unfinished, by its file name.
		id := replies.RouteName(filepath.Base(path))
		if unfinished(path, time.Now()) == "" {
			if rep, err := replies.Read(path, filepath.Base(path), cmp.Or(q.MaxReply, maxReply), protocols[0]); err == nil {
				id = rep.Route(protocols...)
			}
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Source implements runner.Queue.
func (q Queue) Source(id string, unnamed bool) runner.Source {
	return &Backlog{folder: folder{dir: q.Dir, id: id, unnamed: unnamed, maxReply: q.MaxReply}, tried: map[string]bool{}}
}

// unfinished says why a reply is not taken yet: written, or just cut off.
func unfinished(path string, now time.Time) string {
	const again = "; run 'courier process' again once it is saved"
	if writing, _ := beingWritten(path); writing {
		return "it is still open for writing" + again
	}
	info, err := os.Stat(path)
	if err != nil || now.Sub(info.ModTime()) >= CutOffWait {
		return ""
	}
	if cut, err := looksCutOff(path); err == nil && cut.openMidLine() {
		return "it was written moments ago and stops in the middle of a command block" + again
	}
	return ""
}

// File is one reply file named on the command line.
type File struct {
	Path     string
	Inbox    string // a reply there is settled like any other
	MaxReply int64  // as Queue's
	done     bool
	routed   *replies.Reply // read by Route, given by Next
}

// Route implements runner.RoutedSource.
func (f *File) Route(protocols []frontend.FrontEnd, maxReply int64) (string, error) {
	rep, err := replies.Read(f.Path, f.name(), cmp.Or(f.MaxReply, maxReply), protocols[0])
	if err != nil {
		return "", f.unusable(err)
	}
	f.routed = &rep
	return rep.Route(protocols...), nil
}

// Next implements runner.Source: the file's reply, once.
func (f *File) Next(_ context.Context, req runner.Request) (replies.Reply, error) {
	if f.done {
		return replies.Reply{}, runner.ErrExhausted
	}
	f.done = true
	if f.routed != nil {
		return f.routed.For(req.FrontEnd), nil
	}
	rep, err := replies.Read(f.Path, f.name(), cmp.Or(f.MaxReply, req.MaxReply), req.FrontEnd)
	if err != nil {
		return replies.Reply{}, f.unusable(err)
	}
	return rep, nil
}

// Settle implements runner.Source.
func (f *File) Settle(name, hash string, how runner.Settlement) (string, error) {
	return folder{dir: f.Inbox, maxReply: f.MaxReply}.Settle(name, hash, how)
}

// name is the reply's name: its base name in the inbox, else its path.
func (f *File) name() string {
	if f.inInbox() {
		return filepath.Base(f.Path)
	}
	if !strings.ContainsRune(f.Path, filepath.Separator) {
		return "." + string(filepath.Separator) + f.Path
	}
	return f.Path
}

func (f *File) inInbox() bool {
	abs, err := filepath.Abs(f.Path)
	inbox, err2 := filepath.Abs(f.Inbox)
	return err == nil && err2 == nil && filepath.Dir(abs) == inbox
}

// unusable moves a reply that can never be applied out of the inbox.
func (f *File) unusable(err error) error {
	if !replies.IsUnusable(err) || !f.inInbox() {
		return err
	}
	return setAside(f.Inbox, filepath.Base(f.Path), f.name(), err)
}

// setAside moves dir/name, which can never be applied (err), into
// rejected/, as a *runner.SetAsideError naming it shown.
func setAside(dir, name, shown string, err error) error {
	moved, mvErr := moveAside(dir, name, "rejected")
	if mvErr != nil || moved == "" {
		return errors.Join(err, mvErr)
	}
	return &runner.SetAsideError{Reply: shown, Err: err, MovedTo: moved}
}

// folder is what the inbox sources share: where, whose replies, settling.
type folder struct {
	dir      string
	id       string
	unnamed  bool  // replies that name no session are taken too
	maxReply int64 // 0: the runner's limit
}

// take reads a reply file for req's session: another session's is a
// *runner.SkippedError, one never applicable set aside (see setAside).
func (f folder) take(path string, req runner.Request) (replies.Reply, error) {
	name := filepath.Base(path)
	rep, err := replies.Read(path, name, cmp.Or(f.maxReply, req.MaxReply), req.FrontEnd)
	if !namedReply(name) && (err != nil || (len(rep.Parsed.Commands) == 0 && rep.Parsed.Session == "")) {
		// Another extension counts only when it reads as a reply.
		why := "it holds no command blocks and no courier header (.txt and .md files are taken whatever they hold)"
		if err != nil {
			why = "it cannot be read as a reply: " + err.Error()
		}
		return replies.Reply{}, &runner.SkippedError{Reply: name, Why: why}
	}
	if err != nil {
		if id := replies.RouteName(name); id != "" && id != f.id {
			return replies.Reply{}, &runner.SkippedError{Reply: name, Session: id}
		}
		if !replies.IsUnusable(err) {
			return replies.Reply{}, err
		}
		return replies.Reply{}, setAside(f.dir, name, name, err)
	}
	id := rep.Route(req.Protocols...)
	if (id != "" && id != f.id) || (id == "" && !f.unnamed) {
		return replies.Reply{}, &runner.SkippedError{Reply: name, Session: id, Hash: rep.Hash}
	}
	return rep, nil
}

// Settle implements runner.Source: an applied or duplicate reply goes into
// processed/, an outdated one into rejected/; others stay.
func (f folder) Settle(name, hash string, how runner.Settlement) (string, error) {
	if how == runner.Skipped || name != filepath.Base(name) || !replies.Holds(filepath.Join(f.dir, name), hash, f.maxReply) {
		return "", nil
	}
	sub := "processed"
	if how == runner.Outdated {
		sub = "rejected"
	}
	return moveAside(f.dir, name, sub)
}

// moveAside moves dir/name into dir/sub/, never replacing a file there.
func moveAside(dir, name, sub string) (string, error) {
	p := filepath.Join(dir, name)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	to := filepath.Join(dir, sub)
	if err := os.MkdirAll(to, 0o755); err != nil {
		return "", fmt.Errorf("move reply: %w", err)
	}
	dst := filepath.Join(to, name)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for n := 2; ; n++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = filepath.Join(to, fmt.Sprintf("%s.%d%s", stem, n, ext))
	}
	if err := os.Rename(p, dst); err != nil {
		return "", fmt.Errorf("move reply: %w", err)
	}
	return dst, nil
}

// Save writes text into dir as a reply for session id, named with the time.
func Save(dir, id, text string, at time.Time) (string, error) {
	name := fmt.Sprintf("%s_reply_%s.txt", id, at.Format("20060102-150405.000"))
	p := filepath.Join(dir, name)
	if err := atomicfile.Write(p, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("save reply: %w", err)
	}
	return p, nil
}
