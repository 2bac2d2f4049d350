package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/session"
	"github.com/courier-agent/courier/internal/workspace"
)

// fileState is a file as it is before a change.
type fileState struct {
	data    []byte
	exists  bool
	mode    fs.FileMode
	isDir   bool
	outside error
}

func (e *Engine) current(p string) (fileState, error) {
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
	data, err := e.ws.ReadFile(p)
	if err != nil {
		return fileState{}, err
	}
	return fileState{data: data, exists: true, mode: info.Mode().Perm()}, nil
}

func rejected(c command.Command, err error) command.Result {
	return command.Result{Type: c.Type, Path: c.Path, Status: command.Rejected, Summary: "REJECTED: " + err.Error()}
}

func failed(c command.Command, format string, args ...any) command.Result {
	return command.Result{Type: c.Type, Path: c.Path, Status: command.Failed, Summary: fmt.Sprintf(format, args...)}
}

// editFailed reports a failed edit: the first line of the error is the
// summary, the rest (matching places, similar lines) the detail.
func editFailed(c command.Command, err error) command.Result {
	msg := err.Error()
	summary, detail, _ := strings.Cut(msg, "\n")
	r := failed(c, "Edit of '%s' failed, file unchanged: %s", c.Path, summary)
	r.Output = strings.Trim(detail, "\n")
	return r
}

// plan is a computed file change, not yet made.
type plan struct {
	after  []byte
	delete bool
	base   string
	rng    [2]int
	done   command.Result
}

// changeFile carries out CREATE_FILE, EDIT_FILE or DELETE_FILE: it computes
// the new content, journals the change with the before and after content,
// and only then touches the file.
func (r *turnRun) changeFile(i int, c command.Command) (command.Result, error) {
	if _, err := workspace.Clean(c.Path); err != nil {
		if workspace.IsOutside(err) {
			return rejected(c, err), nil
		}
		return failed(c, "Invalid path '%s': %v", c.Path, err), nil
	}
	cur, err := r.current(c.Path)
	if err != nil {
		return failed(c, "Cannot read '%s': %v", c.Path, err), nil
	}
	if cur.outside != nil {
		return rejected(c, cur.outside), nil
	}
	if cur.isDir {
		return failed(c, "'%s' is a folder, not a file", c.Path), nil
	}
	var pl plan
	var res *command.Result
	switch c.Type {
	case command.CreateFile:
		pl, res = r.planCreate(c, cur)
	case command.EditFile:
		pl, res, err = r.planEdit(i, c, cur)
	case command.DeleteFile:
		pl, res = r.planDelete(c, cur)
	}
	if err != nil {
		return command.Result{}, err
	}
	if res != nil {
		return *res, nil
	}
	return r.commitChange(i, c, cur, pl)
}

func (e *Engine) planCreate(c command.Command, cur fileState) (plan, *command.Result) {
	if cur.exists && c.NoOverwrite {
		r := failed(c, "File '%s' already exists", c.Path)
		return plan{}, &r
	}
	if cur.exists {
		if line, text, found := edit.HasElision(c.Content); found {
			r := failed(c, "Refused to overwrite '%s': line %d of the new content (%q) is a placeholder for code left out, so writing it would lose the existing code. Send the complete file, or change only the parts that differ with EDIT_FILE", c.Path, line, strings.TrimSpace(text))
			return plan{}, &r
		}
	}
	verb := "Created"
	if cur.exists {
		verb = "Overwrote"
	}
	done := command.Result{Type: c.Type, Path: c.Path, Status: command.OK,
		Summary: fmt.Sprintf("%s '%s' (%s)", verb, c.Path, plural(countLines(c.Content), "line"))}
	return plan{after: []byte(c.Content), done: done}, nil
}

func (e *Engine) planDelete(c command.Command, cur fileState) (plan, *command.Result) {
	if !cur.exists {
		r := failed(c, "File '%s' not found", c.Path)
		return plan{}, &r
	}
	done := command.Result{Type: c.Type, Path: c.Path, Status: command.OK, Summary: fmt.Sprintf("Deleted '%s'", c.Path)}
	return plan{delete: true, done: done}, nil
}

func (r *turnRun) planEdit(i int, c command.Command, cur fileState) (plan, *command.Result, error) {
	if !cur.exists {
		r := failed(c, "File '%s' not found", c.Path)
		return plan{}, &r, nil
	}
	before := string(cur.data)
	if len(c.Edits) > 0 {
		a, err := edit.ApplyEdits(before, c.Edits)
		if err != nil {
			r := editFailed(c, err)
			return plan{}, &r, nil
		}
		notes := strings.Join(a.Notes, "\n")
		if len(a.Skipped) == len(c.Edits) {
			r := command.Result{Type: c.Type, Path: c.Path, Status: command.OK,
				Summary: fmt.Sprintf("No change to '%s': the edit was already applied", c.Path), Output: notes}
			return plan{}, &r, nil
		}
		summary := fmt.Sprintf("Edited '%s' (%s)", c.Path, plural(len(c.Edits)-len(a.Skipped), "search/replace edit"))
		if len(a.Skipped) > 0 {
			summary += fmt.Sprintf(", %d already applied", len(a.Skipped))
		}
		done := command.Result{Type: c.Type, Path: c.Path, Status: command.OK, Summary: summary, Output: notes}
		return plan{after: []byte(a.Text), done: done}, nil, nil
	}
	base, tr, earlier, err := r.lineBase(i, c.Path, before)
	if err != nil {
		return plan{}, nil, err
	}
	after, err := tr.Apply(edit.LineRange{Start: c.StartLine, End: c.EndLine, Text: c.Content})
	if err != nil {
		r := editFailed(c, err)
		return plan{}, &r, nil
	}
	summary := fmt.Sprintf("Edited '%s' lines %d-%d", c.Path, c.StartLine, c.EndLine)
	if earlier {
		summary += " (numbered as before this reply's earlier edits of it)"
	}
	done := command.Result{Type: c.Type, Path: c.Path, Status: command.OK, Summary: summary}
	return plan{after: []byte(after), base: base, rng: [2]int{c.StartLine, c.EndLine}, done: done}, nil, nil
}

// lineBase finds the text a line-range edit's numbers refer to: the file as
// it was before this reply if only line-range edits of this reply have
// changed it since, otherwise its current content. It returns the base's
// blob, a tracker holding the earlier ranges applied to it, and whether
// there were any.
func (r *turnRun) lineBase(i int, p, current string) (string, *edit.Tracker, bool, error) {
	begin, _ := r.t.Begun()
	p, _ = workspace.Clean(p) // changes are journaled under the clean path
	var base string
	var prior []edit.LineRange
	for j := 0; j < i; j++ {
		ch := r.js.changes[j]
		if ch == nil || ch.Path != p {
			continue
		}
		if res, ok := r.js.results[j]; !ok || res.Status != command.OK {
			continue
		}
		// A line-range edit whose base is the content it found started
		// afresh (after a RUN_COMMAND changed the file, even back to
		// its original content).
		if ch.Base == "" || ch.Base != base || ch.Before == ch.Base {
			prior = nil
			base = ch.Base
		}
		if ch.Base != "" {
			cmd := begin.Commands[j]
			prior = append(prior, edit.LineRange{Start: ch.Range[0], End: ch.Range[1], Text: cmd.Content})
		}
	}
	if base != "" {
		data, err := r.t.Blob(base)
		if err != nil {
			return "", nil, false, err
		}
		// A RUN_COMMAND may have changed the file in between; then the
		// recorded ranges no longer describe it and the current text is the
		// base.
		if tr, err := edit.ResumeTracker(string(data), prior); err == nil && tr.Text() == current {
			return base, tr, len(prior) > 0, nil
		}
	}
	h, err := r.t.SaveBlob([]byte(current))
	if err != nil {
		return "", nil, false, err
	}
	return h, edit.NewTracker(current), false, nil
}

// commitChange journals a planned change and then makes it.
func (r *turnRun) commitChange(i int, c command.Command, cur fileState, pl plan) (command.Result, error) {
	clean, _ := workspace.Clean(c.Path)
	ch := &session.Change{Path: clean, BeforeMode: cur.mode, Delete: pl.delete, Base: pl.base, Range: pl.rng}
	if cur.exists {
		h, err := r.t.SaveBlob(cur.data)
		if err != nil {
			return command.Result{}, err
		}
		ch.Before = h
	}
	if !pl.delete {
		if cur.exists && string(cur.data) == string(pl.after) {
			pl.done.Summary = fmt.Sprintf("No change to '%s': the new content is the same as the old", c.Path)
		}
		h, err := r.t.SaveBlob(pl.after)
		if err != nil {
			return command.Result{}, err
		}
		ch.After = h
		dirs, err := r.ws.MissingDirs(c.Path)
		if err != nil {
			return failed(c, "Cannot write '%s': %v", c.Path, err), nil
		}
		ch.CreatedDirs = dirs
	}
	old := string(cur.data)
	newText := string(pl.after)
	pl.done.Diff, pl.done.Added, pl.done.Removed = edit.Diff(c.Path, old, newText, r.opts.DiffLimit)
	ch.Done = pl.done
	if err := r.t.Append(session.Record{Kind: session.Apply, Index: i, Change: ch}); err != nil {
		return command.Result{}, err
	}
	r.js.changes[i] = ch
	if err := r.make(r.t, ch); err != nil {
		return failed(c, "Cannot change '%s': %v", c.Path, err), nil
	}
	return pl.done, nil
}

// make carries out a journaled change.
func (e *Engine) make(t *session.Turn, ch *session.Change) error {
	if ch.Delete {
		return e.ws.Remove(ch.Path)
	}
	data, err := t.Blob(ch.After)
	if err != nil {
		return err
	}
	_, err = e.ws.WriteFile(ch.Path, data)
	return err
}

// recoverChange settles a change that was journaled but whose result was
// not: the file's content tells whether it happened.
func (e *Engine) recoverChange(t *session.Turn, ch *session.Change) (command.Result, error) {
	if err := e.ws.CleanTemps(ch.Path); err != nil {
		return command.Result{}, err
	}
	cur, err := e.current(ch.Path)
	if err != nil {
		return command.Result{}, err
	}
	now := ""
	if cur.exists && !cur.isDir {
		now = session.Hash(cur.data)
	}
	switch {
	case ch.Delete && !cur.exists, !ch.Delete && now == ch.After:
		return ch.Done, nil
	case now == ch.Before && cur.exists == (ch.Before != ""):
		if err := e.make(t, ch); err != nil {
			r := ch.Done
			r.Status = command.Failed
			r.Summary = fmt.Sprintf("Cannot change '%s': %v", ch.Path, err)
			return r, nil
		}
		return ch.Done, nil
	}
	r := ch.Done
	r.Status = command.Interrupted
	r.Summary = fmt.Sprintf("Change to '%s' was interrupted and the file has since been changed by something else; it was left as it is", ch.Path)
	return r, nil
}

// readFile checks a READ_FILE; the content itself is taken when the next
// outbox is written, so it is as fresh as possible.
func (e *Engine) readFile(c command.Command) command.Result {
	if _, err := workspace.Clean(c.Path); err != nil {
		if workspace.IsOutside(err) {
			return rejected(c, err)
		}
		return failed(c, "Invalid path '%s': %v", c.Path, err)
	}
	if workspace.IsGlob(c.Path) {
		matches, err := e.ws.Glob(c.Path)
		if err != nil {
			return failed(c, "%v", err)
		}
		if len(matches) == 0 {
			return failed(c, "No file matches '%s'", c.Path)
		}
		return command.Result{Type: c.Type, Path: c.Path, Status: command.OK,
			Summary: fmt.Sprintf("Queued %s matching '%s' for the next request", plural(len(matches), "file"), c.Path)}
	}
	info, err := e.ws.Stat(c.Path)
	switch {
	case workspace.IsOutside(err):
		return rejected(c, err)
	case errors.Is(err, fs.ErrNotExist):
		return failed(c, "File '%s' not found", c.Path)
	case err != nil:
		return failed(c, "Cannot read '%s': %v", c.Path, err)
	case info.IsDir():
		return failed(c, "'%s' is a folder; the workspace listing shows its files", c.Path)
	case !info.Mode().IsRegular():
		err := &workspace.NotRegularError{Path: c.Path, Mode: info.Mode()}
		return failed(c, "%v; READ_FILE reads regular files only", err)
	}
	return command.Result{Type: c.Type, Path: c.Path, Status: command.OK,
		Summary: fmt.Sprintf("Queued '%s' for the next request", c.Path)}
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	if strings.HasSuffix(word, "s") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
