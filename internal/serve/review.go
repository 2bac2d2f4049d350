package serve

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/edit"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/workspace"
)

// Reviewed is one command of a reply as Review shows it, nothing applied:
// a file command's diff against the workspace now (or why it would
// fail), a RUN_COMMAND's policy decision (ask, deny) and reason; one an
// earlier approval of all like it covers runs unasked, and says so.
type Reviewed struct {
	Index    int             `json:"index"`
	Command  command.Command `json:"command"`
	Diff     string          `json:"diff,omitempty"`
	Note     string          `json:"note,omitempty"`
	Approval string          `json:"approval,omitempty"`
	Reason   string          `json:"reason,omitempty"`
}

type reviewView struct {
	ID    string
	Items []Reviewed
}

// showLimit bounds a file Review reads, and a diff it shows.
const showLimit = 1 << 20

// review is POST /api/sessions/{id}/review: what each command of the
// reply (the body, or the form's "reply") would do.
func (s *Server) review(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	f, err := s.form(r, "reply")
	if err != nil {
		return err
	}
	rep, err := s.parse(id, f.Get("reply"), time.Now())
	if err != nil {
		return err
	}
	rr, _ := s.runner(id)
	info, err := rr.Status(id)
	if err != nil {
		return err
	}
	ws, err := workspace.Open(info.Workspace)
	if err != nil {
		return err
	}
	defer ws.Close()
	items := preview(ws, s.o.Config.Commands.Policy, info.Approved, rep.Parsed.Commands)
	return s.show(w, r, "review", reviewView{ID: id, Items: items}, items)
}

// preview goes over the commands on copies of the files in memory, as
// the engine would (what a RUN_COMMAND does it cannot know).
func preview(ws *workspace.Workspace, pol *policy.Policy, approved []string, cmds []command.Command) []Reviewed {
	files := map[string]*string{} // after the commands so far; nil: deleted
	lines := map[string]*edit.Tracker{}
	read := func(p string) (string, bool, error) {
		if t, ok := files[p]; ok {
			return deref(t), t != nil, nil
		}
		f, info, err := ws.OpenRegular(p)
		if err != nil {
			return "", false, err
		}
		defer f.Close()
		if info.Size() > showLimit {
			return "", true, fmt.Errorf("%s is too large to show a diff of (%d bytes)", p, info.Size())
		}
		data, err := io.ReadAll(io.LimitReader(f, showLimit))
		return string(data), true, err
	}
	out := make([]Reviewed, len(cmds))
	for i, c := range cmds {
		v := Reviewed{Index: i, Command: c}
		switch c.Type {
		case command.CreateFile, command.EditFile, command.DeleteFile:
			before, exists, err := read(c.Path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				v.Note = err.Error()
				break
			}
			after, note := change(c, before, exists, lines)
			if v.Note = note; note == "" {
				v.Diff, _, _ = edit.Diff(c.Path, before, deref(after), showLimit)
				files[c.Path] = after
			}
		case command.RunCommand:
			lines = map[string]*edit.Tracker{}
			if pol != nil {
				switch verdict := pol.Check(c.Command).WithEnv(c.Env); {
				case verdict.CoveredBy(approved):
					v.Note = "runs without asking: you approved all like it (" + verdict.Rule + ")"
				case verdict.Decision != policy.Allow:
					v.Approval, v.Reason = string(verdict.Decision), verdict.Reason
				}
			}
		}
		out[i] = v
	}
	return out
}

// change is what file command c makes of a file's text (nil: deletes
// it), or why it would fail; lines numbers a reply's line-range edits of a
// file as it was before them.
func change(c command.Command, before string, exists bool, lines map[string]*edit.Tracker) (*string, string) {
	if c.Type != command.EditFile || !c.IsLineRange() {
		delete(lines, c.Path)
	}
	switch {
	case c.Type == command.DeleteFile && !exists, c.Type == command.EditFile && !exists:
		return nil, "the file does not exist: this would fail"
	case c.Type == command.DeleteFile:
		return nil, ""
	case c.Type == command.CreateFile && exists && c.NoOverwrite:
		return nil, "the file exists: this would fail"
	case c.Type == command.CreateFile && c.Encoding == command.Base64:
		data, err := base64.StdEncoding.DecodeString(c.Content)
		if err != nil {
			return nil, "not valid base64: this would fail"
		}
		return nil, fmt.Sprintf("writes %d bytes (binary)", len(data))
	case c.Type == command.CreateFile:
		if line, text, found := edit.HasElision(c.Content); found && exists {
			return nil, fmt.Sprintf("line %d (%q) stands for code left out: courier refuses to overwrite the file with it", line, text)
		}
		return &c.Content, ""
	}
	var after string
	var err error
	switch {
	case c.Literal:
		after, err = edit.ApplyLiteral(before, c.Edits)
	case len(c.Edits) > 0:
		var a edit.Applied
		a, err = edit.ApplyEdits(before, c.Edits)
		after = a.Text
	default:
		t, ok := lines[c.Path]
		if !ok {
			t = edit.NewTracker(before)
			lines[c.Path] = t
		}
		after, err = t.Apply(edit.LineRange{Start: c.StartLine, End: c.EndLine, Text: c.Content})
	}
	if err != nil {
		return nil, "this would fail: " + err.Error()
	}
	return &after, ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
