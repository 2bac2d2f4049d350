package engine

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/workspace"
)

// fileState is a file as it is before a change.
type fileState struct {
	data    string
	exists  bool
	mode    fs.FileMode
	isDir   bool
	outside error
	tooBig  int64
	hash    string // of data, when known
}

func (f *fileState) contentHash() string {
	if f.hash == "" {
		f.hash = history.Hash(f.data)
	}
	return f.hash
}

// onDisk reads a file; one larger than limit (unless negative) is not
// read: its size comes back as tooBig.
func (e *Engine) onDisk(p string, limit int64) (fileState, error) {
	info, err := e.ws.Stat(p)
	if workspace.IsOutside(err) {
		return fileState{outside: err}, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fileState{}, nil
	}
	if err != nil {
		return fileState{}, err
	}
	if info.IsDir() {
		return fileState{exists: true, isDir: true}, nil
	}
	if !info.Mode().IsRegular() {
		// Reading a FIFO or a device could block forever or never end.
		return fileState{}, &workspace.NotRegularError{Path: p, Mode: info.Mode()}
	}
	if limit >= 0 && info.Size() > limit {
		return fileState{exists: true, mode: info.Mode().Perm(), tooBig: info.Size()}, nil
	}
	data, err := e.ws.ReadFile(p)
	if err != nil {
		return fileState{}, err
	}
	return fileState{data: string(data), exists: true, mode: info.Mode().Perm()}, nil
}

func rejected(c command.Command, err error) command.Result {
	return command.Result{Type: c.Type, Path: c.Path, Status: command.Rejected, Summary: "REJECTED: " + err.Error(), Reason: err.Error()}
}

// result is c's result; errors among args lose their host paths (see
// plainErr).
func result(c command.Command, status command.Status, format string, args ...any) command.Result {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = plainErr(err)
		}
	}
	return command.Result{Type: c.Type, Path: c.Path, Command: c.Command, Status: status, Summary: fmt.Sprintf(format, args...)}
}

func failed(c command.Command, format string, args ...any) command.Result {
	return result(c, command.Failed, format, args...)
}

func notFound(c command.Command) command.Result {
	r := failed(c, "File '%s' not found", c.Path)
	r.Cause = command.CauseNotFound
	return r
}

// editFailed reports a failed edit: the error's first line in the
// summary, the rest (matching places, similar lines) as detail.
func editFailed(c command.Command, err error) command.Result {
	summary, detail, _ := strings.Cut(err.Error(), "\n")
	r := failed(c, "Edit of '%s' failed, file unchanged: %s", c.Path, summary)
	r.Output = strings.Trim(detail, "\n")
	return r
}

// plan is a computed file change, not yet made.
type plan struct {
	after  string
	delete bool
	binary bool // no text diff
	base   string
	rng    [2]int
	done   command.Result
	only   bool // done is all: nothing to change
}

// only plans no change: res is the command's result.
func only(res command.Result) (plan, error) { return plan{done: res, only: true}, nil }

// changeFile plans CREATE_FILE, EDIT_FILE or DELETE_FILE against the file
// as the turn left it, records the change (keeping what undo and recovery
// need) and adds it to the batch.
func (r *turnRun) changeFile(i int, c command.Command) error {
	clean, err := workspace.Clean(c.Path)
	if err != nil {
		if workspace.IsOutside(err) {
			return r.settle(i, rejected(c, err))
		}
		return r.settle(i, failed(c, "Invalid path '%s': %v", c.Path, err))
	}
	if err := r.ws.CheckWrite(c.Path); workspace.IsProtected(err) {
		return r.settle(i, rejected(c, err))
	}
	if err := r.admit(clean); err != nil {
		return err
	}
	cur, pending := r.b.pendingState(clean)
	if !pending {
		// The turn's first change of a file keeps its content for undo;
		// one whose copy would not fit is refused unread.
		limit := int64(-1)
		if !r.seen(clean) {
			limit = r.keepRoom()
		}
		cur, err = r.onDisk(c.Path, limit)
	}
	var notRegular *workspace.NotRegularError
	switch {
	case errors.As(err, &notRegular):
		return r.settle(i, failed(c, "%v; courier changes regular files only", err))
	case err != nil:
		return r.settle(i, failed(c, "Cannot read '%s': %v", c.Path, err))
	case cur.outside != nil:
		return r.settle(i, rejected(c, cur.outside))
	case cur.isDir:
		return r.settle(i, failed(c, "'%s' is a folder, not a file", c.Path))
	case cur.tooBig > 0:
		return r.settle(i, r.tooMuch(c, cur.tooBig))
	}
	pl, err := r.plan(i, c, cur)
	if err != nil {
		return err
	}
	if pl.only {
		return r.settle(i, pl.done)
	}
	return r.commitChange(i, c, clean, cur, pl)
}

// settle sets a command's result, with nothing to make.
func (r *turnRun) settle(i int, res command.Result) error {
	if res.Time.IsZero() {
		res.Time = time.Now()
	}
	r.results[i] = res
	r.queue(i, true)
	return nil
}

// plan computes a file command's change against cur.
func (r *turnRun) plan(i int, c command.Command, cur fileState) (plan, error) {
	switch {
	case c.Type == command.CreateFile:
		return r.planCreate(c, cur)
	case !cur.exists:
		return only(notFound(c))
	case c.Type == command.EditFile:
		return r.planEdit(i, c, cur)
	}
	return plan{delete: true, done: result(c, command.OK, "Deleted '%s'", c.Path)}, nil
}

func (r *turnRun) keepRoom() int64 { return max(0, r.opts.KeepLimit-r.kept) }

// tooMuch refuses a change whose copy for undo would pass KeepLimit.
func (r *turnRun) tooMuch(c command.Command, size int64) command.Result {
	if size > r.opts.KeepLimit {
		return failed(c, "Not changed: courier keeps a copy of each file a reply changes, so that 'courier undo' can restore it, and '%s' (%s) is larger than the %s it keeps for one reply. Change it with a %s instead (undo does not cover what commands do)",
			c.Path, human.Bytes(size), human.Bytes(r.opts.KeepLimit), r.opts.Words.Name(command.RunCommand))
	}
	return failed(c, "Not changed: courier keeps a copy of each file a reply changes, so that 'courier undo' can restore it, and '%s' (%s) would take this reply's copies past %s. Change it in a later reply",
		c.Path, human.Bytes(size), human.Bytes(r.opts.KeepLimit))
}

func (e *Engine) planCreate(c command.Command, cur fileState) (plan, error) {
	if cur.exists && c.NoOverwrite {
		r := failed(c, "File '%s' already exists", c.Path)
		r.Cause = command.CauseExists
		return only(r)
	}
	verb := "Created"
	if cur.exists {
		verb = "Overwrote"
	}
	if c.Encoding == command.Base64 {
		// Bytes, not text: no check for elided code, no text diff.
		data, err := base64.StdEncoding.DecodeString(c.Content)
		if err != nil {
			return only(failed(c, "Not written: the content of '%s' is not valid base64: %v", c.Path, err))
		}
		return plan{after: string(data), binary: true, done: result(c, command.OK, "%s '%s' (%s)", verb, c.Path, human.Count(len(data), "byte", ""))}, nil
	}
	if cur.exists { // a new file has no code to lose: not searched
		if line, text, found := edit.HasElision(c.Content); found {
			return only(failed(c, "Refused to overwrite '%s': line %d of the new content (%q) is a placeholder for code left out, so writing it would lose the existing code. Send the complete file, or change only the parts that differ with %s", c.Path, line, strings.TrimSpace(text), e.opts.Words.Name(command.EditFile)))
		}
	}
	done := result(c, command.OK, "%s '%s' (%s)", verb, c.Path, human.Count(human.Lines(c.Content), "line", ""))
	return plan{after: c.Content, done: done}, nil
}

func (r *turnRun) planEdit(i int, c command.Command, cur fileState) (plan, error) {
	before := cur.data
	if c.Literal {
		after, err := edit.ApplyLiteral(before, c.Edits)
		if err != nil {
			return only(editFailed(c, err))
		}
		done := result(c, command.OK, "Edited '%s' (%s)", c.Path, human.Count(len(c.Edits), "exact replacement", ""))
		return plan{after: after, done: done}, nil
	}
	if len(c.Edits) > 0 {
		a, err := edit.ApplyEdits(before, c.Edits)
		if err != nil {
			return only(editFailed(c, err))
		}
		if len(a.Skipped) == len(c.Edits) {
			res := result(c, command.OK, "No change to '%s': the edit was already applied", c.Path)
			res.Output = strings.Join(a.Notes, "\n")
			return only(res)
		}
		done := result(c, command.OK, "Edited '%s' (%s)", c.Path, human.Count(len(c.Edits)-len(a.Skipped), "search/replace edit", ""))
		if len(a.Skipped) > 0 {
			done.Summary += fmt.Sprintf(", %d already applied", len(a.Skipped))
		}
		done.Output = strings.Join(a.Notes, "\n")
		return plan{after: a.Text, done: done}, nil
	}
	base, tr, n, err := r.lineBase(i, c.Path, before, cur.contentHash())
	var over errTooMuch
	if errors.As(err, &over) {
		return only(r.tooMuch(c, over.size))
	}
	if err != nil {
		return plan{}, err
	}
	after, err := tr.Apply(edit.LineRange{Start: c.StartLine, End: c.EndLine, Text: c.Content})
	if err != nil {
		return only(editFailed(c, err))
	}
	clean, _ := workspace.Clean(c.Path)
	r.trackers[clean] = tracker{base, n + 1, tr}
	done := result(c, command.OK, "Edited '%s' lines %d-%d", c.Path, c.StartLine, c.EndLine)
	if n > 0 {
		done.Summary += " (numbered as before this reply's earlier edits of it)"
	}
	return plan{after: after, base: base, rng: [2]int{c.StartLine, c.EndLine}, done: done}, nil
}

// lineBase finds the text a line-range edit's numbers refer to: the file
// before this reply if only its line-range edits changed it since, else
// its content now. It returns the base's hash, a tracker with the earlier
// ranges applied, and how many.
func (r *turnRun) lineBase(i int, p, current, h string) (string, *edit.Tracker, int, error) {
	p, _ = workspace.Clean(p) // changes are recorded under the clean path
	base, prior := r.segment(p, i)
	if base != "" {
		// Unless a RUN_COMMAND changed the file in between.
		if tr := r.trackerFor(i, p, base, prior); tr != nil && tr.Text() == current {
			return base, tr, len(prior), nil
		}
	}
	if !r.t.Kept(h) && r.chainTo(p, h, i) == nil {
		// Recovery could not rebuild this base: keep it.
		if int64(len(current)) > r.keepRoom() {
			return "", nil, 0, errTooMuch{int64(len(current))}
		}
		if _, err := r.t.Keep(current); err != nil {
			return "", nil, 0, err
		}
		r.kept += int64(len(current))
	}
	tr := edit.NewTracker(current)
	r.trackers[p] = tracker{h, 0, tr}
	return h, tr, 0, nil
}

// errTooMuch is a line-range base too large to keep.
type errTooMuch struct{ size int64 }

func (e errTooMuch) Error() string { return fmt.Sprintf("a %d-byte copy is over the limit", e.size) }

// segment returns the base and ranges of the line-range edits of p
// before command i that i would continue.
func (r *turnRun) segment(p string, i int) (string, []edit.LineRange) {
	var base string
	var prior []edit.LineRange
	for _, j := range r.byPath[p] {
		ch := r.changes[j]
		if j >= i {
			break
		}
		if !r.ok(j) {
			continue
		}
		// An edit whose base is the content it found started afresh.
		if ch.Base == "" || ch.Base != base || ch.From == ch.Base {
			prior = nil
			base = ch.Base
		}
		if ch.Base != "" {
			prior = append(prior, edit.LineRange{Start: ch.Range[0], End: ch.Range[1], Text: r.cmds[j].Content})
		}
	}
	return base, prior
}

// trackerFor returns a tracker of base with the prior ranges applied,
// cached or rebuilt; nil when the base cannot be had.
func (r *turnRun) trackerFor(i int, p, base string, prior []edit.LineRange) *edit.Tracker {
	if t := r.trackers[p]; t.tr != nil && t.base == base && t.n == len(prior) {
		return t.tr
	}
	text, err := r.text(p, base, i)
	if err != nil {
		return nil
	}
	tr, err := edit.ResumeTracker(text, prior)
	if err != nil {
		return nil
	}
	r.trackers[p] = tracker{base, len(prior), tr}
	return tr
}

// commitChange records a planned change and adds it to the batch.
func (r *turnRun) commitChange(i int, c command.Command, clean string, cur fileState, pl plan) error {
	ch := &history.Record{Kind: history.RecordApply, Index: i, Path: clean, Mode: cur.mode, Base: pl.base}
	if pl.base != "" {
		ch.Range = &pl.rng
	}
	if cur.exists {
		ch.From = cur.contentHash()
		if !r.seen(clean) {
			// Kept as before the turn's first change: for undo, and for
			// recovery to rebuild from.
			if _, err := r.t.Keep(cur.data); err != nil {
				return err
			}
			r.kept += int64(len(cur.data))
		}
	}
	if !pl.delete {
		if cur.exists && cur.data == pl.after {
			pl.done.Summary = fmt.Sprintf("No change to '%s': the new content is the same as the old", c.Path)
		}
		ch.To = history.Hash(pl.after)
	}
	if !pl.binary {
		pl.done.Diff, pl.done.Added, pl.done.Removed = edit.Diff(c.Path, cur.data, pl.after, diffLimit)
	}
	pl.done.Time = time.Now()
	if r.diffs+len(pl.done.Diff) > r.opts.DiffBudget {
		pl.done.Diff = ""
		pl.done.Summary += fmt.Sprintf(" (+%d -%d; diff left out: this reply's diffs passed %d KB)", pl.done.Added, pl.done.Removed, r.opts.DiffBudget>>10)
	}
	ch.Result = &pl.done
	if err := r.t.Add(*ch); err != nil {
		return err
	}
	r.note(i, ch)
	r.diffs += len(pl.done.Diff)
	r.results[i] = pl.done
	if pl.delete {
		return r.hold(i, clean, pendingRemove, "", "")
	}
	return r.hold(i, clean, pendingWrite, pl.after, ch.To)
}

// recoverChange settles a change recorded without its result: the file's
// content tells whether it happened (content a later change of the same
// batch left counts). One that did not is planned again, and must give
// the content recorded.
func (r *turnRun) recoverChange(i int, c command.Command, ch *history.Record) error {
	if err := r.ws.CleanTemps(ch.Path); err != nil {
		return err
	}
	if err := r.admit(ch.Path); err != nil {
		return err
	}
	// The file as the turn's pending changes leave it, or else on disk.
	cur, pending := r.b.pendingState(ch.Path)
	if !pending {
		var err error
		if cur, err = r.onDisk(ch.Path, -1); err != nil {
			return err
		}
	}
	now := ""
	if cur.exists && !cur.isDir {
		now = cur.contentHash()
	}
	if r.madeAlready(i, ch, cur.exists, now) {
		r.results[i] = *ch.Result
		if err := r.hold(i, ch.Path, pendingKeep, "", ""); err != nil {
			return err
		}
		// Its changes are recorded first (see flush).
		r.b.made[i] = true
		return nil
	}
	if now == ch.From && cur.exists == (ch.From != "") {
		pl, err := r.plan(i, c, cur)
		if err != nil {
			return err
		}
		if !pl.only && pl.delete == (ch.To == "") && (pl.delete || history.Hash(pl.after) == ch.To) {
			r.results[i] = *ch.Result
			if pl.delete {
				return r.hold(i, ch.Path, pendingRemove, "", "")
			}
			return r.hold(i, ch.Path, pendingWrite, pl.after, ch.To)
		}
	}
	res := *ch.Result
	res.Status = command.Interrupted
	res.Diff, res.Added, res.Removed = "", 0, 0
	res.Summary = fmt.Sprintf("Change to '%s' was interrupted and the file has since been changed by something else; it was left as it is", ch.Path)
	return r.settle(i, res)
}

// madeAlready reports whether the file shows change i made: what i, or a
// later change of it without a result either, left.
func (r *turnRun) madeAlready(i int, ch *history.Record, exists bool, now string) bool {
	leftBy := func(ch *history.Record) bool {
		if ch.To == "" {
			return !exists
		}
		return exists && now == ch.To
	}
	if leftBy(ch) {
		return true
	}
	for j, later := range r.changes {
		if _, done := r.results[j]; j > i && later.Path == ch.Path && !done && leftBy(later) {
			return true
		}
	}
	return false
}

// readFile checks a READ_FILE, whose content the next request shows; an
// inline read returns it now, at most room bytes.
func (e *Engine) readFile(c command.Command, room int) command.Result {
	if _, err := workspace.Clean(c.Path); err != nil {
		if workspace.IsOutside(err) {
			return rejected(c, err)
		}
		return failed(c, "Invalid path '%s': %v", c.Path, err)
	}
	if workspace.IsGlob(c.Path) && !c.Inline {
		matches, err := e.ws.Glob(c.Path)
		if err != nil {
			return failed(c, "%v", err)
		}
		if len(matches) == 0 {
			return failed(c, "No file matches '%s'", c.Path)
		}
		return result(c, command.OK, "Queued %s matching '%s' for the next request", human.Count(len(matches), "file", ""), c.Path)
	}
	info, err := e.ws.Stat(c.Path)
	switch {
	case workspace.IsOutside(err), workspace.IsProtected(err):
		return rejected(c, err)
	case errors.Is(err, fs.ErrNotExist):
		return notFound(c)
	case err != nil:
		return failed(c, "Cannot read '%s': %v", c.Path, err)
	case info.IsDir():
		return failed(c, "'%s' is a folder; the workspace listing shows its files", c.Path)
	case !info.Mode().IsRegular():
		err := &workspace.NotRegularError{Path: c.Path, Mode: info.Mode()}
		return failed(c, "%v; %s reads regular files only", err, e.opts.Words.Name(command.ReadFile))
	case c.Inline:
		return e.readInline(c, room)
	}
	return result(c, command.OK, "Queued '%s'%s for the next request", c.Path, command.LineRange(c.StartLine, c.EndLine))
}

// InlineReadLimit is the largest file an inline READ_FILE returns (the
// Agent Spaces protocol's limit), and what one reply's inline reads
// return together.
const InlineReadLimit = 10 << 20

// readInline reads the regular file an inline READ_FILE names into its
// result: text, or base64 for bytes not UTF-8 (or when asked for).
func (e *Engine) readInline(c command.Command, room int) command.Result {
	// Checked again as opened: what readFile looked at may have changed.
	f, info, err := e.ws.OpenRegular(c.Path)
	if err != nil {
		return failed(c, "Cannot read '%s': %v", c.Path, err)
	}
	defer f.Close()
	if info.Size() > InlineReadLimit {
		return failed(c, "Not read: '%s' is %s, more than the %s one read returns; read parts of it with a shell command (head, sed -n, tail)",
			c.Path, human.Bytes(info.Size()), human.Bytes(InlineReadLimit))
	}
	if info.Size() > int64(room) {
		return failed(c, "Not read: '%s' is %s, more than the %s left of the %s the reads of one reply return together; read it in a later reply",
			c.Path, human.Bytes(info.Size()), human.Bytes(int64(max(room, 0))), human.Bytes(InlineReadLimit))
	}
	data, err := io.ReadAll(io.LimitReader(f, InlineReadLimit+1))
	if err != nil {
		return failed(c, "Cannot read '%s': %v", c.Path, err)
	}
	if len(data) > InlineReadLimit {
		return failed(c, "Not read: '%s' grew past %s while it was read", c.Path, human.Bytes(InlineReadLimit))
	}
	res := result(c, command.OK, "Read '%s' (%s)", c.Path, human.Bytes(int64(len(data))))
	res.Size, res.Content = int64(len(data)), string(data)
	if c.Encoding == command.Base64 || !utf8.Valid(data) {
		res.Content, res.Encoding = base64.StdEncoding.EncodeToString(data), command.Base64
	}
	return res
}
